import QtQuick
import QtTest
import Kiln.Ui

Item {
    width: 800
    height: 600

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
    SignalSpy { id: edited; target: question; signalName: "editSubmitted" }
    SignalSpy { id: regenerated; target: answer; signalName: "regenerateRequested" }

    TestCase {
        name: "MessageBubble"
        when: windowShown

        function test_answerSplitsProseAndCode() {
            compare(answer.blocks.length, 3)
            const code = findChild(answer, "codeText")
            verify(code !== null)
            compare(code.text, "print('hi')")
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

        function test_whileStreamingNoActionsOrStats() {
            answer.streaming = true
            verify(!findChild(answer, "statsLine").visible || !findChild(answer, "statsLine").parent.visible)
            verify(!findChild(answer, "regenerateButton").parent.visible)
            answer.streaming = false
        }
    }
}
