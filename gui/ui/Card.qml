// A titled panel. Children go below the title, laid out in a column.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

Rectangle {
    id: card
    property string title
    property string subtitle
    default property alias content: body.data
    property alias headerItems: header.data   // extra items at the title's right

    implicitWidth: column.implicitWidth + 2 * Theme.padding
    implicitHeight: column.implicitHeight + 2 * Theme.padding
    color: Theme.surface
    radius: Theme.radius
    border.color: Theme.border

    // Anchored at the top and sides only: the card's height follows the content, never the reverse
    // (a two-way dependency makes Qt Quick Layouts give up with a "polish loop").
    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: Theme.padding
        spacing: 12

        RowLayout {
            visible: card.title.length > 0
            Layout.fillWidth: true
            spacing: Theme.gap
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                Label {
                    text: card.title
                    font.pixelSize: 15
                    font.weight: Font.DemiBold
                    color: Theme.text
                }
                Label {
                    visible: card.subtitle.length > 0
                    text: card.subtitle
                    font.pixelSize: Theme.fontSmall
                    color: Theme.textMuted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
            Row {
                id: header
                spacing: Theme.gap
                Layout.alignment: Qt.AlignTop
            }
        }
        ColumnLayout {
            id: body
            spacing: 14
            Layout.fillWidth: true
        }
    }
}
