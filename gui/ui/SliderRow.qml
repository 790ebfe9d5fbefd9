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
            background: Rectangle {
                x: slider.leftPadding
                y: slider.topPadding + slider.availableHeight / 2 - height / 2
                width: slider.availableWidth
                height: 4
                radius: 2
                color: Theme.border
                Rectangle {
                    width: slider.visualPosition * parent.width
                    height: parent.height
                    radius: 2
                    color: Theme.accent
                }
            }
            handle: Rectangle {
                x: slider.leftPadding + slider.visualPosition * (slider.availableWidth - width)
                y: slider.topPadding + slider.availableHeight / 2 - height / 2
                width: 18
                height: 18
                radius: 9
                color: slider.pressed ? Theme.accentHover : Theme.surface
                border.width: 2
                border.color: Theme.accent
            }
        }
        Label {
            text: Format.number(slider.value, row.decimals)
            color: Theme.text
            horizontalAlignment: Text.AlignRight
            Layout.preferredWidth: 40
        }
    }
}
