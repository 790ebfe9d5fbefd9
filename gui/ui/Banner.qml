// A message across the top of a view: info, warning or error, optionally dismissable.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

Rectangle {
    id: banner
    property string kind: "info"   // "info", "warning", "error"
    property alias text: label.text
    property bool closable: true
    property string actionText
    signal closed()
    signal actionTriggered()

    readonly property color ink: kind === "error" ? Theme.danger : kind === "warning" ? Theme.warning : Theme.accent
    visible: text.length > 0
    implicitHeight: row.implicitHeight + 16
    radius: Theme.radius
    color: kind === "error" ? Theme.dangerSoft : kind === "warning" ? Theme.warningSoft : Theme.accentSoft

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 6
        spacing: 10
        Icon {
            name: banner.kind === "info" ? "info" : "warning"
            color: banner.ink
            Layout.preferredWidth: 18
            Layout.preferredHeight: 18
        }
        Label {
            id: label
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.text
            font.pixelSize: Theme.fontBody
        }
        PlainButton {
            visible: banner.actionText.length > 0
            text: banner.actionText
            implicitHeight: 30
            onClicked: banner.actionTriggered()
        }
        IconButton {
            visible: banner.closable
            iconName: "close"
            tip: qsTr("Dismiss")
            onClicked: banner.closed()
        }
    }
}
