// What the model is: architecture and shape, from its config (before loading) or the load.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Card {
    id: card
    property var info: ({})
    readonly property bool loaded: (info.contextLength || 0) > 0

    title: qsTr("Facts")
    subtitle: loaded ? qsTr("As loaded") : qsTr("Read from the model's files; weights not loaded")

    FactGrid {
        Layout.fillWidth: true
        facts: [
            { label: qsTr("Architecture"), value: card.info.architecture || "" },
            { label: qsTr("Format"), value: card.info.sourceFormat || "" },
            { label: qsTr("Stored as"), value: card.info.storedTypes ? qsTr("%1 tensors").arg(card.info.storedTypes) : "" },
            { label: qsTr("Parameters"), value: card.info.parameters ? Format.count(card.info.parameters) : "" },
            { label: qsTr("Layers"), value: card.info.layers
                  ? qsTr("%1 (%2 global, the rest sliding-window)").arg(card.info.layers).arg(card.info.globalLayers) : "" },
            { label: qsTr("Hidden size"), value: card.info.hidden || "" },
            { label: qsTr("Attention heads"), value: card.info.heads
                  ? qsTr("%1 query, %2 key/value, %3 wide").arg(card.info.heads).arg(card.info.kvHeads).arg(card.info.headDim) : "" },
            { label: qsTr("Feed-forward size"), value: card.info.ffn || "" },
            { label: qsTr("Vocabulary"), value: card.info.vocab ? Format.count(card.info.vocab) : "" },
            { label: qsTr("Sliding window"), value: card.info.slidingWindow ? qsTr("%1 tokens").arg(card.info.slidingWindow) : "" },
            { label: qsTr("Trained context"), value: card.info.maxContext ? qsTr("%1 tokens").arg(card.info.maxContext) : "" },
            { label: qsTr("Context allocated"), value: card.loaded ? qsTr("%1 tokens").arg(card.info.contextLength) : "" },
            { label: qsTr("Runs on"), value: card.loaded ? (card.info.runsOn || card.info.backend) : "" },
            { label: qsTr("Weights in memory"), value: card.loaded ? Format.bytes(card.info.weightBytes) : "" },
            { label: qsTr("Context cache"), value: card.loaded ? Format.bytes(card.info.kvCacheBytes) : "" },
            { label: qsTr("Notes"), value: (card.info.notes || []).join("\n") }
        ]
    }
    SettingOrigins {
        Layout.fillWidth: true
        visible: origins.length > 0
        origins: card.info.settingOrigins || []
    }
}
