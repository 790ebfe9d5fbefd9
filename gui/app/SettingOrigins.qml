// "Where these settings come from": each architecture and sampling setting of the model, its
// value and the file and key it was read from (or the default that filled in). Folded by default:
// most people never need it, and it is a long list. A Column of Rows, as in FactGrid (Qt 6.4's
// GridLayout crashes when Repeaters rebuild it).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

ColumnLayout {
    id: section
    property var origins: []   // [{name, value, origin}]
    property bool expanded: false
    spacing: 8

    AbstractButton {
        id: toggle
        objectName: "settingOriginsToggle"
        Layout.fillWidth: true
        implicitHeight: 26
        hoverEnabled: true
        text: qsTr("Where these settings come from (%1)").arg(section.origins.length)
        Accessible.name: text
        onClicked: section.expanded = !section.expanded
        contentItem: Row {
            spacing: 6
            Icon {
                anchors.verticalCenter: parent.verticalCenter
                width: 14
                height: 14
                name: "chevron"
                rotation: section.expanded ? 0 : -90
                color: Theme.textMuted
            }
            Label {
                anchors.verticalCenter: parent.verticalCenter
                text: toggle.text
                font.pixelSize: Theme.fontBody
                font.weight: Font.Medium
                color: toggle.hovered ? Theme.text : Theme.textMuted
            }
        }
    }

    Column {
        id: rows
        visible: section.expanded
        Layout.fillWidth: true
        spacing: 5
        Repeater {
            model: section.expanded ? section.origins : []
            delegate: Row {
                id: entry
                required property var modelData
                width: rows.width
                spacing: 12
                Label {
                    width: 170
                    text: entry.modelData.name
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                    elide: Text.ElideRight
                }
                Label {
                    width: 110
                    text: entry.modelData.value
                    color: Theme.text
                    font.pixelSize: Theme.fontSmall
                    wrapMode: Text.WrapAtWordBoundaryOrAnywhere
                }
                Label {
                    width: Math.max(80, parent.width - 170 - 110 - 2 * parent.spacing)
                    text: entry.modelData.origin
                    color: Theme.textFaint
                    font.pixelSize: Theme.fontSmall
                    wrapMode: Text.WrapAtWordBoundaryOrAnywhere
                }
            }
        }
    }
}
