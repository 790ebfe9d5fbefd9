// A Markdown table from an answer: a bold header over a quiet rule, thin lines between rows and
// a faint tint on every other one, no boxes around every cell. Scrolls sideways when wide.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Flickable {
    id: table
    property var rows: []          // [[cell, ...], ...]: the header row first; cells as Markdown
    readonly property int columns: rows.length > 0 ? rows[0].length : 0

    implicitHeight: grid.implicitHeight
    contentWidth: grid.implicitWidth
    flickableDirection: Flickable.HorizontalFlick
    boundsBehavior: Flickable.StopAtBounds
    clip: true
    ScrollBar.horizontal: ScrollBar { policy: table.contentWidth > table.width ? ScrollBar.AsNeeded : ScrollBar.AlwaysOff }

    Column {
        id: grid
        Repeater {
            model: table.rows
            delegate: Rectangle {
                id: rowItem
                required property var modelData
                required property int index
                implicitWidth: cellsRow.implicitWidth
                implicitHeight: cellsRow.implicitHeight
                color: index > 0 && index % 2 === 0 ? Theme.surfaceAlt : "transparent"
                Row {
                    id: cellsRow
                    Repeater {
                        model: rowItem.modelData
                        delegate: TextEdit {
                            required property string modelData
                            objectName: rowItem.index === 0 ? "tableHeaderCell" : "tableCell"
                            // Equal columns across the answer's width, so they line up row to row.
                            width: Math.max(100, table.width / Math.max(1, table.columns))
                            padding: 8
                            text: modelData
                            readOnly: true
                            selectByMouse: true
                            wrapMode: TextEdit.Wrap
                            textFormat: TextEdit.MarkdownText
                            font.pixelSize: Theme.fontBody
                            font.weight: rowItem.index === 0 ? Font.DemiBold : Font.Normal
                            color: Theme.text
                            selectionColor: Theme.accent
                            selectedTextColor: Theme.accentText
                        }
                    }
                }
                Rectangle {
                    anchors.bottom: parent.bottom
                    width: parent.width
                    height: rowItem.index === 0 ? 2 : 1
                    color: rowItem.index === 0 ? Theme.textFaint : Theme.border
                }
            }
        }
    }
}
