// The window: navigation rail on the left, the six pages, and the objects behind them.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

ApplicationWindow {
    id: window
    width: appSettings.windowWidth
    height: appSettings.windowHeight
    minimumWidth: 900
    minimumHeight: 580
    visible: true
    // "Conversation — model — Kiln", as other chat apps name their windows (task bars show the start).
    title: [chatController.currentTitle, engineController.modelLoaded ? engineController.modelInfo.name : "", "Kiln"]
           .filter(part => part && part.length > 0).join(" — ")
    // Numbers in controls (spin boxes) follow the interface language, as Format's do.
    locale: Qt.locale(translator.language)
    color: Theme.window
    font.pixelSize: Theme.fontBody

    property int currentPage: 0
    readonly property var pages: [
        { name: "chat", title: qsTr("Chat"), icon: "chat" },
        { name: "models", title: qsTr("Models"), icon: "models" },
        { name: "downloads", title: qsTr("Downloads"), icon: "download" },
        { name: "catalogue", title: qsTr("Catalogue"), icon: "search" },
        { name: "hardware", title: qsTr("Hardware"), icon: "hardware" },
        { name: "profiler", title: qsTr("Profiler"), icon: "profiler" },
        { name: "settings", title: qsTr("Settings"), icon: "settings" }
    ]
    function showPage(name) {
        const index = pages.findIndex(p => p.name === name)
        if (index >= 0) currentPage = index
    }
    // Loads with the precision, backend and limits chosen in Settings.
    function loadModel(path) {
        engineController.load(path, appSettings.precision, appSettings.backend, appSettings.npuAttention,
                    appSettings.contextLength, appSettings.threads, appSettings.loadSignature)
    }

    // Controls follow the theme through the palette.
    palette.window: Theme.window
    palette.windowText: Theme.text
    palette.base: Theme.surface
    palette.alternateBase: Theme.surfaceAlt
    palette.text: Theme.text
    palette.button: Theme.surface
    palette.buttonText: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.placeholderText: Theme.textFaint
    palette.mid: Theme.border
    palette.midlight: Theme.hover
    palette.light: Theme.surface
    palette.dark: Theme.textMuted
    palette.toolTipBase: Theme.text
    palette.toolTipText: Theme.window

    AppSettings { id: appSettings }
    LaunchOptions { id: launchOptions }
    Translator { id: translator; language: launchOptions.language.length > 0 ? launchOptions.language : appSettings.language }
    Binding {
        target: Theme
        property: "dark"
        value: (launchOptions.theme.length > 0 ? launchOptions.theme : appSettings.theme) === "dark"
    }
    EngineController {
        id: engineController
        profiling: appSettings.profiling
        serverEnabled: appSettings.serverEnabled
        serverPort: appSettings.serverPort
        onLoaded: info => {
            if (info.remote === true)
                return  // a remote endpoint's model is not a file to reopen (the endpoints list remembers it)
            remoteEndpoints.remember("", "")
            appSettings.addRecentModel(info.path)
            appSettings.lastModel = info.path
        }
    }
    ChatController {
        id: chatController
        engine: engineController
        settings: appSettings
    }
    RemoteEndpoints { id: remoteEndpoints }
    ModelLibrary {
        id: modelLibrary
        settings: appSettings
    }
    DownloadController {
        id: downloadController
        settings: appSettings
        onDownloaded: modelLibrary.refresh()
    }
    HardwareMonitor {
        id: hardwareMonitor
        engine: engineController
    }
    ModelCatalogue {
        id: modelCatalogue
        memoryBytes: hardwareMonitor.info.ramTotal || 0
    }
    ProfileReport {
        id: profileReport
        engine: engineController
    }

    Shortcut {
        sequence: "Ctrl+N"
        context: Qt.ApplicationShortcut
        onActivated: {
            chatController.newConversation()
            window.showPage("chat")
            chatPage.focusComposer()
        }
    }
    Shortcut {
        // Ctrl+Q (not StandardKey.Quit, which is empty on some platforms): closes the window as
        // its close button does, so its state is saved.
        sequence: "Ctrl+Q"
        context: Qt.ApplicationShortcut
        onActivated: window.close()
    }
    Shortcut {
        sequence: "Esc"
        context: Qt.ApplicationShortcut
        enabled: chatController.generating
        onActivated: chatController.stop()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        NavRail {
            Layout.fillHeight: true
            pages: window.pages
            currentIndex: window.currentPage
            onActivated: index => window.currentPage = index
        }
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: window.currentPage

            ChatPage {
                id: chatPage
                chat: chatController
                engine: engineController
                onOpenModels: window.showPage("models")
            }
            ModelsPage {
                engine: engineController
                library: modelLibrary
                settings: appSettings
                remoteEndpoints: remoteEndpoints
                onLoadRequested: path => window.loadModel(path)
                onChatRequested: window.showPage("chat")
                onDownloadsRequested: window.showPage("downloads")
            }
            DownloadsPage {
                downloads: downloadController
                initialRepo: launchOptions.repo
                downloadAtStart: launchOptions.downloadRepo
                onOpenModels: window.showPage("models")
            }
            CataloguePage {
                catalogue: modelCatalogue
                downloads: downloadController
                onOpenDownloads: window.showPage("downloads")
            }
            HardwarePage {
                monitor: hardwareMonitor
                engine: engineController
            }
            ProfilerPage {
                report: profileReport
                engine: engineController
                settings: appSettings
            }
            SettingsPage {
                settings: appSettings
                engine: engineController
                hardware: hardwareMonitor
                onReloadRequested: window.loadModel(engineController.modelInfo.path)
            }
        }
    }

    Loader {
        active: launchOptions.automated
        sourceComponent: Automation {
            appWindow: window
            launch: launchOptions
            engine: engineController
            chat: chatController
            downloads: downloadController
            onPageRequested: name => window.showPage(name)
        }
    }

    onClosing: {
        if (window.visibility === Window.Windowed) {
            appSettings.windowWidth = width
            appSettings.windowHeight = height
        }
    }

    Component.onCompleted: {
        hardwareMonitor.refresh()
        if (launchOptions.page.length > 0)
            showPage(launchOptions.page)
        // A model named on the command line, else the last one used (a remote one too), else the
        // bundled one, else the Models page to choose one.
        const remote = remoteEndpoints.lastUsed
        if (launchOptions.modelPath.length === 0 && remote.url !== undefined && remote.model.length > 0) {
            engineController.useRemote(remote.url, remoteEndpoints.apiKey(remote.url), remote.model)
            return
        }
        const candidates = [launchOptions.modelPath, appSettings.lastModel, modelLibrary.defaultModelPath]
        const path = candidates.find(p => p.length > 0 && modelLibrary.looksLikeModel(p))
        if (path)
            loadModel(path)
        else if (launchOptions.page.length === 0)
            showPage("models")
    }
}
