import QtQuick
import QtTest
import Kiln.Ui

// The composer's images: the attach button only where the model sees (else disabled, saying why),
// thumbnails of what waits for the message, each removable, and a message of images alone.
Item {
    width: 600
    height: 300

    Composer {
        id: composer
        width: 500
        ready: true
    }
    SignalSpy { id: sent; target: composer; signalName: "sendRequested" }
    SignalSpy { id: attach; target: composer; signalName: "attachRequested" }
    SignalSpy { id: removed; target: composer; signalName: "removeImageRequested" }

    TestCase {
        name: "ComposerImages"
        when: windowShown

        readonly property string picture: Qt.resolvedUrl("../../data/vision/exact.png")

        function init() {
            composer.clear()
            composer.images = []
            composer.canAttach = false
            sent.clear()
            attach.clear()
            removed.clear()
        }

        function test_attachIsOffWhereTheModelCannotSee() {
            composer.attachUnavailableReason = "This model cannot see images."
            const button = findChild(composer, "attachButton")
            verify(!button.enabled)
            mouseClick(button)
            compare(attach.count, 0)
            compare(composer.attachTip, "This model cannot see images.")
            composer.canAttach = true
            verify(button.enabled)
            verify(composer.attachTip.indexOf("drop") >= 0)
            mouseClick(button)
            compare(attach.count, 1)
        }

        function test_pendingImagesShowAndCanBeRemoved() {
            const row = findChild(composer, "pendingImages")
            verify(!row.visible)
            const before = composer.implicitHeight
            composer.images = [picture, picture]
            verify(row.visible)
            verify(composer.implicitHeight > before)  // the thumbnails get their own room
            tryVerify(() => row.children.length >= 2)
            const second = row.children[1]
            mouseClick(second, second.width - 6, 6)
            compare(removed.count, 1)
            compare(removed.signalArguments[0][0], 1)
        }

        function test_imagesAloneCanBeSent() {
            findChild(composer, "composerInput").forceActiveFocus()
            keyClick(Qt.Key_Return)
            compare(sent.count, 0)  // nothing to send
            composer.images = [picture]
            keyClick(Qt.Key_Return)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "")
        }
    }
}
