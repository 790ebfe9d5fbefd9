// A setting with a slider and its value.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

SettingRow {
    id: row
    property real from: 0
    property real to: 1
    property real stepSize: 0.01
    property real value: 0
    property int decimals: 2
    signal moved(real value)

    RowLayout {
        spacing: 10
        Slider {
            id: slider
            implicitWidth: 180
            from: row.from
            to: row.to
            stepSize: row.stepSize
            value: row.value
            onMoved: row.moved(value)
        }
        Label {
            text: Format.number(slider.value, row.decimals)
            color: Theme.text
            horizontalAlignment: Text.AlignRight
            Layout.preferredWidth: 40
        }
    }
}
