// A model in the library list: its name, where it came from, and whether it is the loaded one.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

ItemDelegate {
    id: item
    property string name
    property string path
    property string kind       // bundled, downloaded, recent
    property bool exists: true
    property bool selected: false
    property bool loaded: false
    signal forgetRequested()

    hoverEnabled: true
    implicitHeight: 54
    padding: 10
    ToolTip.visible: hovered
    ToolTip.text: item.path
    ToolTip.delay: 800

    background: Rectangle {
        radius: Theme.radius
        color: item.selected ? Theme.accentSoft : item.hovered ? Theme.hover : "transparent"
    }
    contentItem: RowLayout {
        spacing: 10
        Icon {
            name: item.path.endsWith(".gguf") ? "file" : "folder"
            color: item.selected ? Theme.accent : Theme.textMuted
            Layout.preferredWidth: 18
            Layout.preferredHeight: 18
        }
        ColumnLayout {
            spacing: 1
            Layout.fillWidth: true
            Label {
                text: item.name
                font.weight: Font.Medium
                color: item.exists ? Theme.text : Theme.textFaint
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            Label {
                text: (item.kind === "bundled" ? qsTr("Bundled") : item.kind === "downloaded" ? qsTr("Downloaded")
                       : item.kind === "hf-cache" ? qsTr("Hugging Face cache") : qsTr("Recent"))
                      + (item.loaded ? " · " + qsTr("loaded") : "")
                      + (item.exists ? "" : " · " + qsTr("missing"))
                font.pixelSize: Theme.fontSmall
                color: item.loaded ? Theme.success : Theme.textMuted
            }
        }
        IconButton {
            visible: item.kind === "recent" && (item.hovered || !item.exists)
            iconName: "close"
            iconSize: 14
            tip: qsTr("Remove from the list")
            onClicked: item.forgetRequested()
        }
    }
}
