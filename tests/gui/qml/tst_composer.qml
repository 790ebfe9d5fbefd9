import QtQuick
import QtTest
import Kiln.Ui

Item {
    width: 600
    height: 240

    Composer {
        id: composer
        width: 500
    }
    SignalSpy { id: sent; target: composer; signalName: "sendRequested" }
    SignalSpy { id: stopped; target: composer; signalName: "stopRequested" }

    TestCase {
        name: "Composer"
        when: windowShown

        function init() {
            composer.generating = false
            composer.ready = true
            composer.clear()
            sent.clear()
            stopped.clear()
            findChild(composer, "composerInput").forceActiveFocus()
        }

        function test_ctrlEnterSendsTheText() {
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_Return, Qt.ControlModifier)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "hi")
        }

        function test_enterSendsAndShiftEnterStartsANewLine() {
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_B)
            compare(sent.count, 0)
            compare(composer.text, "a\nb")
            keyClick(Qt.Key_Return)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "a\nb")
        }

        function test_theOldWayKeepsEnterForNewLines() {
            composer.ctrlEnterSends = true
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_Return)
            keyClick(Qt.Key_B)
            compare(sent.count, 0)
            compare(composer.text, "a\nb")
            verify(composer.placeholder.indexOf("Ctrl+Enter") >= 0)
            keyClick(Qt.Key_Return, Qt.ControlModifier)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "a\nb")
            composer.ctrlEnterSends = false
        }

        function test_blankTextIsNotSent() {
            keyClick(Qt.Key_Space)
            keyClick(Qt.Key_Return, Qt.ControlModifier)
            compare(sent.count, 0)
            verify(!findChild(composer, "sendButton").enabled)
        }

        function test_theButtonSends() {
            composer.text = "from the button"
            mouseClick(findChild(composer, "sendButton"))
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "from the button")
        }

        function test_whileGeneratingTheButtonStops() {
            composer.text = "next question"
            composer.generating = true
            const button = findChild(composer, "stopButton")
            verify(button !== null)
            verify(button.enabled)
            mouseClick(button)
            compare(stopped.count, 1)
            keyClick(Qt.Key_Return, Qt.ControlModifier)
            compare(sent.count, 0)  // no second question while one is answered
        }

        function test_withoutAModelNothingIsSent() {
            composer.ready = false
            composer.text = "hello"
            keyClick(Qt.Key_Return, Qt.ControlModifier)
            compare(sent.count, 0)
            verify(!findChild(composer, "sendButton").enabled)
        }
    }
}
