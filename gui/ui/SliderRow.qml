// A setting with a slider and its value. A resettable one can stand at someone else's default
// (isDefault): it then shows defaultText instead of the bare number, and otherwise a button that
// goes back to that default.
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
    property bool resettable: false
    property bool isDefault: false
    property string defaultText     // e.g. "0.95 (model default)"
    property string resetTip: qsTr("Back to the default")
    signal moved(real value)
    signal resetRequested()

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
            objectName: "sliderValue"
            readonly property bool atDefault: row.resettable && row.isDefault
            text: atDefault && row.defaultText.length > 0 ? row.defaultText : Format.number(slider.value, row.decimals)
            color: atDefault ? Theme.textMuted : Theme.text
            horizontalAlignment: Text.AlignRight
            Layout.preferredWidth: row.resettable ? 150 : 40
            elide: Text.ElideRight
        }
        IconButton {
            objectName: "sliderReset"
            visible: row.resettable
            // Kept in place while hidden, so the slider does not jump when it appears.
            opacity: row.isDefault ? 0 : 1
            enabled: !row.isDefault
            iconName: "regenerate"
            tip: row.resetTip
            onClicked: row.resetRequested()
        }
    }
}
