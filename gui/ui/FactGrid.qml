// Label / value pairs in two aligned columns. A Column of rows rather than a GridLayout fed by
// Repeaters (Qt 6.4's GridLayout crashes when those rebuild mid-layout); its implicit width is
// fixed so that a layout's width and the wrapped rows' height never feed each other.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Item {
    id: grid
    // [{label, value}]; empty values are left out
    property var facts: []
    property real labelWidth: 170

    implicitWidth: 320
    implicitHeight: rows.implicitHeight

    Column {
        id: rows
        width: grid.width
        spacing: 7
        Repeater {
            model: grid.facts.filter(f => f.value !== undefined && f.value !== null && f.value !== "")
            delegate: Row {
                required property var modelData
                width: rows.width
                spacing: 16
                Label {
                    width: grid.labelWidth
                    text: modelData.label
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontBody
                    elide: Text.ElideRight
                }
                Label {
                    width: parent.width - grid.labelWidth - parent.spacing
                    text: String(modelData.value)
                    color: Theme.text
                    font.pixelSize: Theme.fontBody
                    wrapMode: Text.Wrap
                }
            }
        }
    }
}
