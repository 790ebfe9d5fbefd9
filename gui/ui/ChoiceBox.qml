// A drop-down list of choices, framed like the other fields. The list draws its own rows in the
// theme's colours: the style's rows painted the current choice white on white.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

ComboBox {
    id: box
    implicitWidth: 220
    implicitHeight: 36
    font.pixelSize: Theme.fontBody
    hoverEnabled: true

    background: Rectangle {
        radius: Theme.radiusSmall
        color: box.hovered ? Theme.hover : Theme.surface
        border.color: box.visualFocus || box.popup.visible ? Theme.accent : Theme.border
    }
    contentItem: Label {
        leftPadding: 12
        rightPadding: box.indicator.width + 4
        text: box.displayText
        font: box.font
        color: Theme.text
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    indicator: Icon {
        x: box.width - width - 10
        y: (box.height - height) / 2
        width: 14
        height: 14
        name: "chevron"
        color: Theme.textMuted
    }

    delegate: ItemDelegate {
        id: row
        required property int index
        readonly property bool current: index === box.currentIndex
        width: ListView.view ? ListView.view.width : box.width
        implicitHeight: 34
        highlighted: box.highlightedIndex === index
        hoverEnabled: true
        contentItem: Label {
            objectName: "choiceText"
            leftPadding: 4
            text: box.textAt(row.index)
            font.pixelSize: box.font.pixelSize
            font.weight: row.current ? Font.DemiBold : Font.Normal
            color: row.current ? Theme.accent : Theme.text
            verticalAlignment: Text.AlignVCenter
            elide: Text.ElideRight
        }
        background: Rectangle {
            objectName: "choiceBackground"
            radius: Theme.radiusSmall
            color: row.highlighted || row.hovered ? Theme.hover : row.current ? Theme.surfaceAlt : Theme.surface
        }
    }

    popup: Popup {
        y: box.height + 2
        width: box.width
        padding: 4
        implicitHeight: Math.min(contentItem.implicitHeight + 8, 320)
        contentItem: ListView {
            clip: true
            implicitHeight: contentHeight
            model: box.popup.visible ? box.delegateModel : null
            currentIndex: box.highlightedIndex
            ScrollIndicator.vertical: ScrollIndicator {}
        }
        background: Rectangle {
            radius: Theme.radiusSmall
            color: Theme.surface
            border.color: Theme.border
        }
    }
}
