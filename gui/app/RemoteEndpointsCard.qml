// The Models page's remote endpoints: add an OpenAI-compatible server (its address and, if it
// needs one, an API key), see the models it lists, and chat with one of them as with a local model.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Card {
    id: card
    required property EngineController engine
    required property RemoteEndpoints endpoints
    signal chatRequested()
    property string addError

    title: qsTr("Remote endpoints")
    subtitle: qsTr("Models served elsewhere through the OpenAI-compatible API: another Kiln, vLLM, SGLang, llama.cpp's server or Ollama.")

    function add() {
        addError = endpoints.add(urlField.text, keyField.text)
        if (addError.length === 0) {
            urlField.text = ""
            keyField.text = ""
        }
    }
    function use(url, model) {
        engine.useRemote(url, endpoints.apiKey(url), model)
        endpoints.remember(url, model)
        chatRequested()
    }

    // The lists are asked for when the page is shown, not at every start: an endpoint may be far away.
    onVisibleChanged: if (visible && endpoints.available) endpoints.refresh()
    Component.onCompleted: if (visible && endpoints.available) endpoints.refresh()

    Label {
        visible: !card.endpoints.available
        text: qsTr("This build of Kiln cannot reach remote endpoints.")
        color: Theme.textMuted
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Repeater {
        model: card.endpoints.endpoints
        delegate: ColumnLayout {
            id: entry
            required property var modelData
            Layout.fillWidth: true
            spacing: 4

            RowLayout {
                Layout.fillWidth: true
                spacing: 6
                Label {
                    text: entry.modelData.root || entry.modelData.url
                    font.weight: Font.Medium
                    color: Theme.text
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
                Label {
                    visible: entry.modelData.hasKey
                    text: qsTr("with API key")
                    font.pixelSize: Theme.fontSmall
                    color: Theme.textMuted
                }
                IconButton {
                    iconName: "regenerate"
                    iconSize: 14
                    tip: qsTr("List its models again")
                    enabled: !entry.modelData.listing
                    onClicked: card.endpoints.refresh(entry.modelData.url)
                }
                IconButton {
                    iconName: "trash"
                    iconSize: 14
                    tip: qsTr("Remove this endpoint")
                    onClicked: card.endpoints.remove(entry.modelData.url)
                }
            }
            Label {
                visible: entry.modelData.listing
                text: qsTr("Asking for its models…")
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
            }
            Label {
                objectName: "endpointError"
                visible: text.length > 0
                text: entry.modelData.error
                font.pixelSize: Theme.fontSmall
                color: Theme.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Repeater {
                model: entry.modelData.models
                delegate: ItemDelegate {
                    id: remoteModel
                    required property string modelData
                    readonly property bool inUse: card.engine.remote && card.engine.modelInfo.name === modelData
                                                  && card.engine.modelInfo.endpoint === entry.modelData.root
                    objectName: "remoteModel"
                    Layout.fillWidth: true
                    implicitHeight: 44
                    padding: 8
                    hoverEnabled: true
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Chat with this model")
                    ToolTip.delay: 800
                    background: Rectangle {
                        radius: Theme.radius
                        color: remoteModel.inUse ? Theme.accentSoft : remoteModel.hovered ? Theme.hover : "transparent"
                    }
                    contentItem: ColumnLayout {
                        spacing: 1
                        Label {
                            text: remoteModel.modelData
                            font.weight: Font.Medium
                            color: Theme.text
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Label {
                            text: remoteModel.inUse ? qsTr("Remote · in use") : qsTr("Remote")
                            font.pixelSize: Theme.fontSmall
                            color: remoteModel.inUse ? Theme.success : Theme.textMuted
                        }
                    }
                    onClicked: card.use(entry.modelData.url, modelData)
                }
            }
        }
    }

    InputField {
        id: urlField
        objectName: "endpointUrlField"
        visible: card.endpoints.available
        Layout.fillWidth: true
        placeholderText: qsTr("Address, e.g. http://192.168.1.20:8080/v1")
        onAccepted: card.add()
    }
    RowLayout {
        visible: card.endpoints.available
        Layout.fillWidth: true
        spacing: Theme.gap
        InputField {
            id: keyField
            objectName: "endpointKeyField"
            Layout.fillWidth: true
            placeholderText: qsTr("API key (if it needs one)")
            echoMode: TextInput.Password
            onAccepted: card.add()
        }
        PlainButton {
            objectName: "addEndpointButton"
            text: qsTr("Add")
            iconName: "plus"
            enabled: urlField.text.trim().length > 0
            onClicked: card.add()
        }
    }
    Label {
        objectName: "addEndpointError"
        visible: card.addError.length > 0
        text: card.addError
        font.pixelSize: Theme.fontSmall
        color: Theme.danger
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
