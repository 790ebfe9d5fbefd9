// A setting: its name and a line of explanation on the left, the control on the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

RowLayout {
    id: row
    property string label
    property string description
    property string note          // e.g. "Takes effect after reloading the model"
    default property alias control: holder.data

    spacing: 24
    Layout.fillWidth: true

    ColumnLayout {
        spacing: 2
        Layout.fillWidth: true
        Layout.preferredWidth: 300
        Label {
            text: row.label
            font.pixelSize: Theme.fontBody
            font.weight: Font.Medium
            color: Theme.text
        }
        Label {
            visible: row.description.length > 0
            text: row.description
            font.pixelSize: Theme.fontSmall
            color: Theme.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            visible: row.note.length > 0
            text: row.note
            font.pixelSize: Theme.fontSmall
            color: Theme.warning
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
    Item {
        id: holder
        implicitWidth: childrenRect.width
        implicitHeight: childrenRect.height
        Layout.alignment: Qt.AlignRight | Qt.AlignVCenter
    }
}
