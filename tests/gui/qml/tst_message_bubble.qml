import QtQuick
import QtTest
import Kiln.Ui

Item {
    width: 800
    height: 900

    MessageBubble {
        id: answer
        width: 700
        role: "assistant"
        text: "Here is code:\n```python\nprint('hi')\n```\nThat's all."
        hasStats: true
        generatedTokens: 34
        timeToFirstTokenMs: 120
        tokensPerSecond: 18.5
        stopReason: "end_of_turn"
        canRegenerate: true
    }
    MessageBubble {
        id: question
        y: 300
        width: 700
        role: "user"
        text: "```not code``` *not markdown*"
        canEdit: true
    }
    MessageBubble {
        id: branched
        y: 420
        width: 700
        role: "assistant"
        text: "A table:\n| a | b |\n|---|---|\n| 1 | 2 |\n> quoted"
        hasStats: true
        generatedTokens: 5
        stopReason: "end_of_turn"
        variant: 2
        variantCount: 3
        rolledOff: 4
    }
    MessageBubble {
        id: stoppedEarly
        y: 560
        width: 700
        role: "assistant"
        text: ""
        hasStats: true
        generatedTokens: 0
        tokensPerSecond: 0
        stopReason: "cancelled"
    }
    SignalSpy { id: switched; target: branched; signalName: "variantRequested" }
    SignalSpy { id: edited; target: question; signalName: "editSubmitted" }
    SignalSpy { id: regenerated; target: answer; signalName: "regenerateRequested" }

    TestCase {
        name: "MessageBubble"
        when: windowShown

        function test_answerSplitsProseAndCode() {
            compare(answer.blocks.length, 3)
            const code = findChild(answer, "codeText")
            verify(code !== null)
            compare(code.getText(0, code.length), "print('hi')")
            verify(code.text.indexOf("color:") >= 0, "the code is highlighted")
            compare(code.font.family, Theme.monoFamily)
            const prose = findChild(answer, "answerText")
            compare(prose.textFormat, TextEdit.MarkdownText)
        }

        function test_copyCodePutsOnlyTheCodeOnTheClipboard() {
            Clipboard.copy("")
            mouseClick(findChild(answer, "copyCodeButton"))
            compare(Clipboard.text(), "print('hi')")
        }

        function test_copyMessageCopiesTheWholeMarkdown() {
            Clipboard.copy("")
            mouseClick(findChild(answer, "copyMessageButton"))
            compare(Clipboard.text(), answer.text)
        }

        function test_statsLineShowsTheNumbers() {
            const stats = findChild(answer, "statsLine")
            verify(stats.visible)
            verify(stats.text.indexOf("34") >= 0, stats.text)
            verify(stats.text.indexOf("120 ms") >= 0, stats.text)
            verify(stats.text.indexOf("18.5") >= 0, stats.text)
        }

        function test_notesShowUnderTheStatsOnlyWhenThereAreSome() {
            const notes = findChild(answer, "notesLine")
            verify(!notes.visible)
            answer.notes = ["NPU attention fell back to the CPU", "second note"]
            tryVerify(() => notes.visible)
            compare(notes.text, "NPU attention fell back to the CPU\nsecond note")
            const numbers = findChild(answer, "statsLine").parent
            tryVerify(() => notes.y >= numbers.y + numbers.height, 2000, "the notes sit below the numbers")
            answer.notes = []
            tryVerify(() => !notes.visible)
        }

        function test_regenerateOnlyOnTheLastAnswer() {
            const button = findChild(answer, "regenerateButton")
            verify(button.visible)
            mouseClick(button)
            compare(regenerated.count, 1)
            answer.canRegenerate = false
            verify(!button.visible)
            answer.canRegenerate = true
        }

        function test_theUsersTextIsShownAsTyped() {
            compare(question.blocks.length, 0)
            const text = findChild(question, "userText")
            compare(text.textFormat, TextEdit.PlainText)
            compare(text.text, question.text)
        }

        function test_editAndSendAgain() {
            mouseClick(findChild(question, "editButton"))
            verify(question.editing)
            const field = findChild(question, "editField")
            compare(field.text, question.text)
            field.selectAll()
            keyClick(Qt.Key_N)
            keyClick(Qt.Key_O)
            mouseClick(findChild(question, "saveEditButton"))
            compare(edited.count, 1)
            compare(edited.signalArguments[0][0], "no")
            verify(!question.editing)
        }

        function test_escapeCancelsAnEdit() {
            edited.clear()
            question.startEdit()
            keyClick(Qt.Key_X)
            keyClick(Qt.Key_Escape)
            verify(!question.editing)
            compare(edited.count, 0)
        }

        function test_versionsShowAndMove() {
            compare(findChild(branched, "variantLabel").text, "2/3")
            verify(findChild(answer, "variantLabel").visible === false)
            mouseClick(findChild(branched, "nextVariantButton"))
            compare(switched.count, 1)
            compare(switched.signalArguments[0][0], 3)
            mouseClick(findChild(branched, "previousVariantButton"))
            compare(switched.signalArguments[1][0], 1)
            branched.variant = 1
            verify(!findChild(branched, "previousVariantButton").enabled)
            branched.variant = 2
        }

        function test_aStopBeforeTheFirstTokenHasNoZeroNumbers() {
            const stats = findChild(stoppedEarly, "statsLine")
            verify(stats.text.indexOf("0 tokens") < 0, stats.text)
            verify(stats.text.indexOf("tokens/s") < 0, stats.text)
            compare(stats.text, "Stopped before the answer began")
        }

        function test_rolledOffTurnsAreNoted() {
            const note = findChild(branched, "rolledOffNote")
            verify(note.visible)
            verify(note.text.indexOf("4") >= 0, note.text)
            verify(!findChild(answer, "rolledOffNote").visible)
        }

        function test_tablesAndQuotesGetTheirOwnBlocks() {
            compare(branched.blocks.length, 3)
            verify(findChild(branched, "tableHeaderCell") !== null)
            const quote = findChild(branched, "quoteText")
            compare(quote.getText(0, quote.length), "quoted")
        }

        function test_whileStreamingNoActionsOrStats() {
            answer.streaming = true
            verify(!findChild(answer, "statsLine").visible || !findChild(answer, "statsLine").parent.visible)
            verify(!findChild(answer, "regenerateButton").parent.visible)
            answer.streaming = false
        }
    }
}
