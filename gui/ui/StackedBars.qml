// One horizontal bar per row (a layer), split into coloured segments (ops), on a common scale.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

ColumnLayout {
    id: chart
    // [{label, ms, segments: [{op, ms}]}]
    property var rows: []
    property var keys: []   // op names: colour i goes to keys[i]
    readonly property real maxMs: rows.reduce((m, r) => Math.max(m, r.ms), 0)
    spacing: 10

    Flow {
        Layout.fillWidth: true
        spacing: 14
        Repeater {
            model: chart.keys
            delegate: Row {
                required property string modelData
                required property int index
                spacing: 5
                Rectangle {
                    anchors.verticalCenter: parent.verticalCenter
                    width: 10
                    height: 10
                    radius: 2
                    color: Theme.seriesColor(index)
                }
                Label {
                    text: modelData
                    font.pixelSize: Theme.fontSmall
                    color: Theme.textMuted
                }
            }
        }
    }

    Repeater {
        model: chart.rows
        delegate: RowLayout {
            id: row
            required property var modelData
            spacing: 10
            Layout.fillWidth: true
            Label {
                text: row.modelData.label
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
                horizontalAlignment: Text.AlignRight
                Layout.preferredWidth: 44
            }
            Item {
                id: track
                Layout.fillWidth: true
                implicitHeight: 14
                Row {
                    height: parent.height
                    Repeater {
                        model: row.modelData.segments
                        delegate: Rectangle {
                            required property var modelData
                            objectName: "segment_" + modelData.op
                            height: track.height
                            width: chart.maxMs > 0 ? track.width * modelData.ms / chart.maxMs : 0
                            color: Theme.seriesColor(Math.max(0, chart.keys.indexOf(modelData.op)))
                            HoverHandler { id: hover }
                            ToolTip.visible: hover.hovered
                            ToolTip.text: modelData.op + ": " + Format.milliseconds(modelData.ms)
                        }
                    }
                }
            }
            Label {
                text: Format.milliseconds(row.modelData.ms)
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
                horizontalAlignment: Text.AlignRight
                Layout.preferredWidth: 64
            }
        }
    }
}
