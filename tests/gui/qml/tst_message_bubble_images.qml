import QtQuick
import QtTest
import Kiln.Ui

// A user's message with images: thumbnails above the words, loaded from the store's files; a
// message of images alone shows no empty text bubble.
Item {
    width: 800
    height: 600

    readonly property string picture: Qt.resolvedUrl("../../data/vision/exact.png")

    MessageBubble {
        id: withText
        width: 700
        role: "user"
        text: "What is this?"
        images: [picture, picture]
        imageNames: ["exact.png", "copy.png"]
    }
    MessageBubble {
        id: imagesOnly
        y: 300
        width: 700
        role: "user"
        text: ""
        images: [picture]
        imageNames: ["exact.png"]
    }

    TestCase {
        name: "MessageBubbleImages"
        when: windowShown

        function thumbnails(bubble) {
            const flow = findChild(bubble, "messageImages")
            const out = []
            for (let i = 0; i < flow.children.length; ++i)
                if (flow.children[i].source !== undefined) out.push(flow.children[i])
            return out
        }

        function test_thumbnailsShowTheStoredFiles() {
            verify(findChild(withText, "messageImages").visible)
            tryVerify(() => thumbnails(withText).length === 2)
            const first = thumbnails(withText)[0]
            tryCompare(first, "status", Image.Ready)
            verify(first.width > 0 && first.height > 0)
            compare(first.Accessible.name, "exact.png")
        }

        function test_imagesAloneShowNoEmptyBubble() {
            tryVerify(() => thumbnails(imagesOnly).length === 1)
            verify(!findChild(imagesOnly, "userBubble").visible)
            verify(findChild(withText, "userBubble").visible)
        }

        function test_answersShowNoImageRow() {
            withText.role = "assistant"
            verify(!findChild(withText, "messageImages").visible)
            withText.role = "user"
        }
    }
}
