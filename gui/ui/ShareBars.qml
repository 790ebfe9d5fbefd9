// Where the time went, one row per kind: name, a bar of its share, milliseconds and percent.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

ColumnLayout {
    id: bars
    // [{op, ms, share}], largest first
    property var rows: []
    property var keys: []   // the colour order (shared with StackedBars)
    spacing: 6

    Repeater {
        model: bars.rows
        delegate: RowLayout {
            required property var modelData
            spacing: 10
            Layout.fillWidth: true
            Label {
                text: modelData.op
                font.pixelSize: Theme.fontBody
                color: Theme.text
                elide: Text.ElideRight
                Layout.preferredWidth: 120
            }
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: 10
                radius: 5
                color: Theme.surfaceAlt
                Rectangle {
                    width: Math.max(2, parent.width * modelData.share)
                    height: parent.height
                    radius: 5
                    color: Theme.seriesColor(Math.max(0, bars.keys.indexOf(modelData.op)))
                }
            }
            Label {
                text: Format.milliseconds(modelData.ms)
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
                horizontalAlignment: Text.AlignRight
                Layout.preferredWidth: 70
            }
            Label {
                text: Format.number(modelData.share * 100, 1) + " %"
                font.pixelSize: Theme.fontSmall
                font.weight: Font.DemiBold
                color: Theme.text
                horizontalAlignment: Text.AlignRight
                Layout.preferredWidth: 56
            }
        }
    }
}
