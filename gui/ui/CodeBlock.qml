// A fenced code block from an answer: fixed font, keywords, strings, comments and numbers in
// colour, its language, and a copy button (which copies the plain code).
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Rectangle {
    id: block
    property string code
    property string language
    property bool copied: false

    function copy() {
        Clipboard.copy(code)
        copied = true
        copiedTimer.restart()
    }

    implicitHeight: header.height + flick.height
    radius: Theme.radius
    color: Theme.codeBackground
    border.color: Theme.border

    Timer {
        id: copiedTimer
        interval: 1500
        onTriggered: block.copied = false
    }

    Item {
        id: header
        width: parent.width
        height: 32
        Label {
            anchors.left: parent.left
            anchors.leftMargin: 12
            anchors.verticalCenter: parent.verticalCenter
            text: block.language.length > 0 ? block.language : qsTr("code")
            font.pixelSize: Theme.fontSmall
            color: Theme.textMuted
        }
        IconButton {
            objectName: "copyCodeButton"
            anchors.right: parent.right
            anchors.rightMargin: 4
            anchors.verticalCenter: parent.verticalCenter
            width: 28
            height: 28
            iconSize: 15
            iconName: block.copied ? "check" : "copy"
            iconColor: block.copied ? Theme.success : Theme.textMuted
            tip: block.copied ? qsTr("Copied") : qsTr("Copy code")
            onClicked: block.copy()
        }
        Rectangle {
            anchors.bottom: parent.bottom
            width: parent.width
            height: 1
            color: Theme.border
        }
    }

    Flickable {
        id: flick
        anchors.top: header.bottom
        width: parent.width
        height: codeText.implicitHeight
        contentWidth: codeText.implicitWidth
        flickableDirection: Flickable.HorizontalFlick
        boundsBehavior: Flickable.StopAtBounds
        clip: true
        ScrollBar.horizontal: ScrollBar { policy: flick.contentWidth > flick.width ? ScrollBar.AsNeeded : ScrollBar.AlwaysOff }

        TextEdit {
            id: codeText
            objectName: "codeText"
            padding: 12
            text: MarkdownBlocks.highlight(block.code, block.language, {
                keyword: Theme.accent, string: Theme.success, comment: Theme.textFaint, number: Theme.seriesColor(1)
            })
            readOnly: true
            selectByMouse: true
            textFormat: TextEdit.RichText
            font.family: Theme.monoFamily
            font.pixelSize: 13
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
        }
    }
}
