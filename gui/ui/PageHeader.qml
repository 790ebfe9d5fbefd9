// A page's title and one line saying what it is for.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

ColumnLayout {
    property alias title: titleLabel.text
    property alias subtitle: subtitleLabel.text
    spacing: 4
    Label {
        id: titleLabel
        font.pixelSize: Theme.fontHeading
        font.weight: Font.DemiBold
        color: Theme.text
    }
    Label {
        id: subtitleLabel
        visible: text.length > 0
        font.pixelSize: Theme.fontBody
        color: Theme.textMuted
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
