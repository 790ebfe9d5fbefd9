// In the chat header: which model answers, at what precision and where; or what is happening.
import QtQuick
import QtQuick.Controls
import Kiln
import Kiln.Ui

AbstractButton {
    id: badge
    required property EngineController engine
    hoverEnabled: true
    implicitHeight: 30
    implicitWidth: row.implicitWidth + 20
    ToolTip.visible: hovered
    ToolTip.text: qsTr("Open the Models page")
    ToolTip.delay: 600

    readonly property color dot: engine.modelLoaded ? Theme.success : engine.loading ? Theme.warning : Theme.textFaint

    background: Rectangle {
        radius: 15
        color: badge.hovered ? Theme.hover : Theme.surfaceAlt
        border.color: Theme.border
    }
    contentItem: Item {
        Row {
            id: row
            anchors.centerIn: parent
            spacing: 8
            Rectangle {
                anchors.verticalCenter: parent.verticalCenter
                width: 8
                height: 8
                radius: 4
                color: badge.dot
            }
            Label {
                objectName: "modelBadgeText"
                anchors.verticalCenter: parent.verticalCenter
                font.pixelSize: Theme.fontSmall
                color: Theme.text
                text: badge.engine.modelLoaded && badge.engine.remote
                      ? qsTr("%1 · remote · %2").arg(badge.engine.modelInfo.name).arg(badge.engine.modelInfo.host)
                      : badge.engine.modelLoaded
                      ? "%1 · %2 · %3".arg(badge.engine.modelInfo.name)
                            .arg(String(badge.engine.modelInfo.precision).toUpperCase())
                            .arg(badge.engine.modelInfo.backend)
                      : badge.engine.loading ? qsTr("Loading… %1 %").arg(Math.round(badge.engine.loadFraction * 100))
                      : qsTr("No model")
            }
        }
    }
}
