// Everything the user can set; saved at once. Load settings say when they need a reload.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property AppSettings settings
    required property EngineController engine
    required property HardwareMonitor hardware
    signal reloadRequested()

    readonly property var npu: hardware.info.npu || ({})
    // Automatic skips CPU-emulated Vulkan devices; choosing Vulkan uses them anyway.
    readonly property bool hasGpu: (hardware.info.gpus || []).length > 0
    readonly property bool onlySoftwareVulkan: hasGpu && (hardware.info.gpus || []).every(g => g.software === true)
    readonly property bool needsReload: engine.modelLoaded && !engine.remote && engine.loadedSignature !== settings.loadSignature

    // Sampling settings the user has not set (undefined) take the loaded model's defaults.
    readonly property var modelDefaults: engine.modelInfo.samplingDefaults || ({})
    readonly property var samplingNames: ["temperature", "topK", "topP", "minP", "repeatPenalty"]
    readonly property bool samplingCustomized: samplingNames.some(name => settings[name] !== undefined)
    function isDefault(name) { return settings[name] === undefined }
    // What the control shows: the user's value, else the model's, else `fallback` (no model loaded).
    function shown(name, fallback) {
        if (settings[name] !== undefined)
            return settings[name]
        return modelDefaults[name] !== undefined ? modelDefaults[name] : fallback
    }
    function defaultText(name, decimals) {
        const v = modelDefaults[name]
        return v === undefined ? qsTr("model default")
                               : qsTr("%1 (model default)").arg(decimals > 0 ? Format.number(v, decimals) : v)
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(parent.width, 900)
            spacing: 20

            PageHeader {
                Layout.fillWidth: true
                Layout.topMargin: Theme.pagePadding
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Settings")
                subtitle: qsTr("Saved as you change them.")
            }

            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: "warning"
                closable: false
                text: page.needsReload ? qsTr("The loaded model still uses the previous loading settings.") : ""
                actionText: qsTr("Reload now")
                onActionTriggered: page.reloadRequested()
            }

            Card {
                title: qsTr("Loading the model")
                subtitle: qsTr("Changes here take effect the next time a model is loaded.")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding

                SettingRow {
                    label: qsTr("Precision")
                    description: qsTr("How the weights are held in memory. As stored keeps a GGUF file's own quantization (a folder: INT8). FP32 is the exact reference at twice the size of FP16; INT8 is close to FP16 at half the size; INT4 is smaller again.")
                    SegmentedChoice {
                        objectName: "settingsPrecision"
                        options: [{ value: "auto", label: qsTr("As stored") }, { value: "fp32", label: "FP32" }, { value: "fp16", label: "FP16" },
                                  { value: "int8", label: "INT8" }, { value: "int4", label: "INT4" }]
                        value: page.settings.precision
                        onChosen: value => page.settings.precision = value
                    }
                }
                SettingRow {
                    label: qsTr("Backend")
                    description: page.onlySoftwareVulkan
                                 ? qsTr("Where the model runs. This computer's only Vulkan device is software Vulkan (slow, for testing): Automatic runs on the CPU.")
                                 : qsTr("Where the model runs. Automatic picks the best Vulkan GPU and falls back to the CPU.")
                    SegmentedChoice {
                        objectName: "settingsBackend"
                        options: [
                            { value: "auto", label: qsTr("Automatic") },
                            { value: "vulkan", label: page.onlySoftwareVulkan ? qsTr("Software Vulkan") : qsTr("Vulkan"), enabled: page.hasGpu,
                              tip: !page.hasGpu ? qsTr("No Vulkan device: %1").arg(page.hardware.info.vulkanStatus || qsTr("see the Hardware page"))
                                   : page.onlySoftwareVulkan ? qsTr("software Vulkan (slow, for testing)") : "" },
                            { value: "cpu", label: qsTr("CPU") }
                        ]
                        value: page.settings.backend
                        onChosen: value => page.settings.backend = value
                    }
                }
                SettingRow {
                    label: qsTr("NPU attention")
                    description: page.npu.present ? qsTr("Run attention on the %1 NPU.").arg(page.npu.generation)
                                 : qsTr("Not available: %1").arg(page.npu.reason || qsTr("no NPU found"))
                    SegmentedChoice {
                        objectName: "settingsNpu"
                        enabled: page.npu.present === true
                        opacity: enabled ? 1 : 0.5
                        options: [{ value: "auto", label: qsTr("Automatic") }, { value: "on", label: qsTr("On") }, { value: "off", label: qsTr("Off") }]
                        value: page.settings.npuAttention
                        onChosen: value => page.settings.npuAttention = value
                    }
                }
                SettingRow {
                    objectName: "contextLengthRow"
                    label: qsTr("Context length")
                    // Past what the loaded model was trained for, the setting is cut to that: say so.
                    readonly property int trained: page.engine.modelInfo.maxContext || 0
                    readonly property int loaded: page.engine.modelInfo.contextLength || 0
                    description: trained > 0 && page.settings.contextLength > trained
                                 ? qsTr("More than the %1 tokens this model was trained for: it is loaded with %1.").arg(trained)
                                 : page.settings.contextLength === 0 && loaded > 0 && loaded < trained
                                 ? qsTr("The model’s own length as far as memory holds it: %1 tokens here (it was trained for %2).").arg(loaded).arg(trained)
                                 : page.settings.contextLength === 0 && loaded > 0
                                 ? qsTr("The model’s own length as far as memory holds it: all %1 tokens it was trained for.").arg(loaded)
                                 : qsTr("The most tokens a conversation can hold. Longer takes more memory.")
                    ChoiceBox {
                        id: contextBox
                        textRole: "label"
                        valueRole: "value"
                        model: [
                            { value: 0, label: qsTr("The model’s own") },
                            { value: 2048, label: "2048" }, { value: 4096, label: "4096" },
                            { value: 8192, label: "8192" }, { value: 16384, label: "16384" },
                            { value: 32768, label: "32768" }, { value: 131072, label: "131072" }
                        ]
                        Component.onCompleted: currentIndex = Math.max(0, indexOfValue(page.settings.contextLength))
                        onActivated: page.settings.contextLength = currentValue
                    }
                }
                SettingRow {
                    label: qsTr("CPU threads")
                    description: qsTr("0 uses every core (%1 here).").arg(page.hardware.info.cpuCores || "?")
                    SpinBox {
                        from: 0
                        to: Math.max(256, page.hardware.info.cpuCores || 0)
                        value: page.settings.threads
                        editable: true
                        onValueModified: page.settings.threads = value
                    }
                }
            }

            Card {
                title: qsTr("Answers")
                subtitle: qsTr("Sampling for new answers.")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding

                SettingRow {
                    label: qsTr("Model defaults")
                    description: qsTr("Settings you have not changed follow the loaded model's own recommendation (its generation_config.json).")
                    PlainButton {
                        objectName: "useModelDefaults"
                        text: qsTr("Use the model's defaults")
                        enabled: page.samplingCustomized
                        onClicked: page.settings.useModelDefaults()
                    }
                }
                SliderRow {
                    objectName: "settingsTemperature"
                    label: qsTr("Temperature")
                    description: qsTr("0 always picks the likeliest word; higher is more varied.")
                    from: 0; to: 2; stepSize: 0.05
                    value: page.shown("temperature", 1)
                    resettable: true
                    isDefault: page.isDefault("temperature")
                    defaultText: page.defaultText("temperature", 2)
                    resetTip: qsTr("Use the model's default")
                    onMoved: v => page.settings.temperature = v
                    onResetRequested: page.settings.temperature = undefined
                }
                SliderRow {
                    objectName: "settingsTopP"
                    label: qsTr("Top-p")
                    description: qsTr("Sample only from the likeliest words that together hold this probability.")
                    from: 0; to: 1; stepSize: 0.01
                    value: page.shown("topP", 1)
                    resettable: true
                    isDefault: page.isDefault("topP")
                    defaultText: page.defaultText("topP", 2)
                    resetTip: qsTr("Use the model's default")
                    onMoved: v => page.settings.topP = v
                    onResetRequested: page.settings.topP = undefined
                }
                SliderRow {
                    objectName: "settingsMinP"
                    label: qsTr("Min-p")
                    description: qsTr("Drop words less likely than this fraction of the likeliest one.")
                    from: 0; to: 0.5; stepSize: 0.01
                    value: page.shown("minP", 0)
                    resettable: true
                    isDefault: page.isDefault("minP")
                    defaultText: page.defaultText("minP", 2)
                    resetTip: qsTr("Use the model's default")
                    onMoved: v => page.settings.minP = v
                    onResetRequested: page.settings.minP = undefined
                }
                SliderRow {
                    objectName: "settingsRepeatPenalty"
                    label: qsTr("Repeat penalty")
                    description: qsTr("Makes words used in the last 64 tokens less likely, so long answers do not loop (1: off).")
                    from: 1; to: 2; stepSize: 0.05
                    value: page.shown("repeatPenalty", 1)
                    resettable: true
                    isDefault: page.isDefault("repeatPenalty")
                    defaultText: page.defaultText("repeatPenalty", 2)
                    resetTip: qsTr("Use the model's default")
                    onMoved: v => page.settings.repeatPenalty = v
                    onResetRequested: page.settings.repeatPenalty = undefined
                }
                SettingRow {
                    label: qsTr("Top-k")
                    description: qsTr("Sample from at most this many words (0: no limit).")
                    RowLayout {
                        spacing: 10
                        SpinBox {
                            objectName: "settingsTopK"
                            from: 0
                            to: 1000
                            editable: true
                            value: page.shown("topK", 0)
                            onValueModified: page.settings.topK = value
                        }
                        Label {
                            text: page.isDefault("topK") ? qsTr("model default") : ""
                            color: Theme.textMuted
                            Layout.preferredWidth: 110
                            elide: Text.ElideRight
                        }
                        IconButton {
                            opacity: page.isDefault("topK") ? 0 : 1
                            enabled: !page.isDefault("topK")
                            iconName: "regenerate"
                            tip: qsTr("Use the model's default")
                            onClicked: page.settings.topK = undefined
                        }
                    }
                }
                SettingRow {
                    objectName: "maxTokensRow"
                    label: qsTr("Longest answer")
                    description: page.settings.maxTokens === 0
                                 ? qsTr("Until the model ends its turn; the context (%1 tokens) is the cap.")
                                   .arg(page.engine.modelInfo.contextLength || qsTr("the model's"))
                                 : qsTr("Tokens after which an answer stops (0: until the model ends its turn).")
                    SpinBox {
                        objectName: "maxTokensBox"
                        from: 0
                        textFromValue: (value, locale) => value === 0 ? qsTr("End of turn") : Number(value).toLocaleString(locale, "f", 0)
                        valueFromText: (text, locale) => {
                            try { return Number.fromLocaleString(locale, text) } catch (e) { return 0 }
                        }
                        to: 32768
                        stepSize: 64
                        editable: true
                        value: page.settings.maxTokens
                        onValueModified: page.settings.maxTokens = value
                    }
                }
            }

            Card {
                title: qsTr("Local API server")
                subtitle: qsTr("Lets other programs on this computer use the loaded model through an OpenAI-compatible HTTP API.")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding

                SettingRow {
                    label: qsTr("Serve on localhost")
                    description: !page.engine.serverAvailable ? qsTr("Not part of this build.")
                                 : page.engine.serverRunning ? qsTr("Serving at %1").arg(page.engine.serverUrl)
                                 : page.engine.serverError.length > 0 ? page.engine.serverError
                                 : page.settings.serverEnabled ? qsTr("Starts when a model is loaded.")
                                 : qsTr("Off.")
                    ToggleSwitch {
                        objectName: "serverSwitch"
                        enabled: page.engine.serverAvailable
                        checked: page.settings.serverEnabled
                        onToggled: page.settings.serverEnabled = checked
                        ToolTip.visible: hovered && !enabled
                        ToolTip.text: qsTr("This build of Kiln has no API server.")
                    }
                }
                SettingRow {
                    label: qsTr("Port")
                    SpinBox {
                        from: 1024
                        to: 65535
                        editable: true
                        enabled: page.engine.serverAvailable
                        value: page.settings.serverPort
                        textFromValue: (v, locale) => String(v)
                        valueFromText: (text, locale) => parseInt(text)
                        onValueModified: page.settings.serverPort = value
                    }
                }
            }

            Card {
                title: qsTr("Downloads")
                subtitle: qsTr("Gated models such as Google's Gemma need a Hugging Face account that accepted the licence.")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding

                SettingRow {
                    label: qsTr("Hugging Face token")
                    description: qsTr("A read token from huggingface.co/settings/tokens. Left empty, the HF_TOKEN environment variable is used.")
                    InputField {
                        objectName: "hfTokenField"
                        implicitWidth: 280
                        echoMode: TextInput.Password
                        placeholderText: qsTr("hf_…")
                        text: page.settings.hfToken
                        onEditingFinished: page.settings.hfToken = text
                    }
                }
            }

            Card {
                title: qsTr("Appearance")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                Layout.bottomMargin: Theme.pagePadding

                SettingRow {
                    label: qsTr("Language")
                    ChoiceBox {
                        objectName: "languageBox"
                        textRole: "label"
                        valueRole: "value"
                        model: [{ value: "en", label: "English" }, { value: "de", label: "Deutsch" }]
                        currentIndex: Math.max(0, indexOfValue(page.settings.language))
                        onActivated: page.settings.language = currentValue
                    }
                }
                SettingRow {
                    label: qsTr("Send with Ctrl+Enter")
                    description: qsTr("Enter then starts a new line. Off: Enter sends and Shift+Enter starts a new line.")
                    ToggleSwitch {
                        objectName: "ctrlEnterSendsSwitch"
                        checked: page.settings.ctrlEnterSends
                        onToggled: page.settings.ctrlEnterSends = checked
                    }
                }
                SettingRow {
                    label: qsTr("Theme")
                    SegmentedChoice {
                        objectName: "themeChoice"
                        options: [{ value: "light", label: qsTr("Light") }, { value: "dark", label: qsTr("Dark") }]
                        value: page.settings.theme
                        onChosen: value => page.settings.theme = value
                    }
                }
            }
        }
    }
}
