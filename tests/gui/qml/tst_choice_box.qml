import QtQuick
import QtQuick.Controls
import QtTest
import Kiln.Ui

Item {
    width: 400
    height: 500

    // A window with the app's palette (Main.qml): with it, the style's highlighted row was drawn
    // in palette.highlightedText on palette.light, white on white.
    ApplicationWindow {
        width: 400
        height: 400
        visible: true
        palette.light: Theme.surface
        palette.highlightedText: Theme.accentText
        palette.highlight: Theme.accent
        palette.text: Theme.text

        ChoiceBox {
            id: box
            textRole: "label"
            valueRole: "value"
            model: [{ value: 0, label: "Model default" }, { value: 2048, label: "2048" }, { value: 4096, label: "4096" }]
            currentIndex: 1
        }
    }

    TestCase {
        name: "ChoiceBox"
        when: windowShown

        // Each row of the open list shows its text, the current one included, in a colour that
        // stands out from its row (the style drew the current row white on white).
        function test_openListShowsEveryChoiceReadably() {
            box.currentIndex = 1
            compare(box.displayText, "2048")
            box.popup.open()
            tryVerify(() => box.popup.opened)
            const list = box.popup.contentItem
            tryCompare(list, "count", 3)
            tryVerify(() => list.itemAtIndex(2) !== null, 5000, "every row is made (height " + list.height + ")")
            const shown = []
            for (let i = 0; i < list.count; ++i) {
                const row = list.itemAtIndex(i)
                verify(row, "row " + i + " exists")
                const label = row.contentItem
                shown.push(label.text)
                verify(label.visible && label.width > 0)
                verify(!Qt.colorEqual(label.color, row.background.color), label.text + " is drawn in its row's colour")
            }
            compare(shown, ["Model default", "2048", "4096"])
            // The current choice stands out from the others.
            verify(!Qt.colorEqual(list.itemAtIndex(1).contentItem.color, list.itemAtIndex(0).contentItem.color))
            box.popup.close()
        }

        function test_choosingAnItemUpdatesTheField() {
            box.currentIndex = 2
            compare(box.displayText, "4096")
            compare(box.currentValue, 4096)
        }
    }
}
