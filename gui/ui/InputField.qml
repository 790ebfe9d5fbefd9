// A one-line text field in the app's look (a repository name, a token).
import QtQuick
import QtQuick.Controls
import Kiln.Ui

TextField {
    id: field
    implicitHeight: 34
    leftPadding: 10
    rightPadding: 10
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
}
