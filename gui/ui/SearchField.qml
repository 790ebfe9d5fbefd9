// A text field with a search icon and a clear button.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

TextField {
    id: field
    leftPadding: 34
    rightPadding: text.length > 0 ? 34 : 10
    implicitHeight: 34
    font.pixelSize: Theme.fontBody
    color: Theme.text
    placeholderTextColor: Theme.textFaint
    selectByMouse: true
    selectionColor: Theme.accent
    selectedTextColor: Theme.accentText

    background: Rectangle {
        radius: Theme.radiusSmall
        color: Theme.surface
        border.color: field.activeFocus ? Theme.accent : Theme.border
    }
    Icon {
        anchors.left: parent.left
        anchors.leftMargin: 10
        anchors.verticalCenter: parent.verticalCenter
        width: 16
        height: 16
        name: "search"
        color: Theme.textFaint
    }
    IconButton {
        visible: field.text.length > 0
        anchors.right: parent.right
        anchors.rightMargin: 2
        anchors.verticalCenter: parent.verticalCenter
        width: 28
        height: 28
        iconSize: 14
        iconName: "close"
        tip: qsTr("Clear")
        onClicked: field.clear()
    }
}
