// Fetch a model from the Hugging Face hub: list a repository's files with their sizes, pick,
// download with progress, cancel and resume. Files land in the folder the Models page lists.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property DownloadController downloads
    property string initialRepo     // from --repo: listed at start
    property bool downloadAtStart: false  // from --download: then the suggested files are fetched
    signal openModels()

    property var chosen: []        // paths ticked in the list
    property bool interrupted: false  // the last download stopped short: the button resumes it
    property string finishedFolder

    function toggle(path, on) {
        const rest = chosen.filter(p => p !== path)
        chosen = on ? rest.concat([path]) : rest
    }
    function listRepo() {
        if (repoField.text.trim().length === 0) return
        finishedFolder = ""
        interrupted = false
        downloads.list(repoField.text)
    }

    Component.onCompleted: {
        if (initialRepo.length > 0) {
            repoField.text = initialRepo
            listRepo()
        }
    }

    Connections {
        target: page.downloads
        // What `kiln pull` would take is ticked; files already on disk are not.
        function onListed(repo, count) {
            page.chosen = page.downloads.suggested.filter(p => !page.downloads.files.some(f => f.path === p && f.local))
            if (page.downloadAtStart && repo === page.initialRepo.trim() && page.chosen.length > 0) {
                page.downloadAtStart = false
                page.downloads.download(page.chosen)
            }
        }
        function onDownloaded(repo, folder) {
            page.interrupted = false
            page.finishedFolder = folder
            page.chosen = []
        }
        function onDownloadFailed(repo, message) { page.interrupted = true }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(parent.width, 960)
            spacing: 20

            PageHeader {
                Layout.fillWidth: true
                Layout.topMargin: Theme.pagePadding
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Downloads")
                subtitle: qsTr("Get a Gemma 3 model from Hugging Face — a model folder or a .gguf file.")
            }

            Card {
                title: qsTr("Repository")
                subtitle: qsTr("OWNER/REPO as on huggingface.co, e.g. ggml-org/gemma-3-1b-it-GGUF.")
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding

                RowLayout {
                    spacing: Theme.gap
                    Layout.fillWidth: true
                    InputField {
                        id: repoField
                        objectName: "repoField"
                        Layout.fillWidth: true
                        placeholderText: "google/gemma-3-1b-it"
                        enabled: !page.downloads.busy
                        onAccepted: page.listRepo()
                    }
                    AccentButton {
                        objectName: "listButton"
                        text: page.downloads.listing ? qsTr("Listing…") : qsTr("List files")
                        iconName: "search"
                        enabled: page.downloads.available && !page.downloads.busy && repoField.text.trim().length > 0
                        onClicked: page.listRepo()
                    }
                }
                Label {
                    objectName: "tokenSource"
                    visible: page.downloads.tokenSource.length > 0
                    text: qsTr("Using the Hugging Face token from %1.").arg(page.downloads.tokenSource)
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                ToggleSwitch {
                    objectName: "sharedCacheSwitch"
                    visible: page.downloads.settings !== null
                    enabled: !page.downloads.busy
                    text: qsTr("Save into the Hugging Face cache (shared with Python tools and llama.cpp)")
                    checked: page.downloads.settings ? page.downloads.settings.hubSharedCache : false
                    onToggled: if (page.downloads.settings) page.downloads.settings.hubSharedCache = checked
                }
                Label {
                    text: qsTr("Gated models (Google's Gemma among them) need a Hugging Face token: Settings → Downloads.")
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Label {
                    visible: !page.downloads.available
                    text: qsTr("This build of Kiln has no downloader.")
                    color: Theme.warning
                }
            }

            Banner {
                objectName: "downloadError"
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: "error"
                closable: false
                text: page.downloads.lastError
            }
            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: "info"
                closable: true
                text: page.finishedFolder.length === 0 ? ""
                      : page.downloads.reusedFiles > 0
                        ? qsTr("Downloaded into %1; %n file(s) were already in the Hugging Face cache and are used from there. The model is in the Models page's library.", "", page.downloads.reusedFiles).arg(page.finishedFolder)
                        : qsTr("Downloaded into %1. The model is in the Models page's library.").arg(page.finishedFolder)
                actionText: qsTr("Open Models")
                onActionTriggered: page.openModels()
                onClosed: page.finishedFolder = ""
            }

            Card {
                visible: page.downloads.repo.length > 0
                title: page.downloads.repo
                subtitle: qsTr("%n file(s), saved to %1", "", page.downloads.files.length).arg(page.downloads.destination)
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                Layout.bottomMargin: Theme.pagePadding

                Repeater {
                    model: page.downloads.files
                    delegate: RowLayout {
                        required property var modelData
                        Layout.fillWidth: true
                        spacing: 10
                        TickBox {
                            checked: page.chosen.indexOf(modelData.path) >= 0
                            enabled: !page.downloads.busy
                            onToggled: page.toggle(modelData.path, checked)
                        }
                        Label {
                            text: modelData.path
                            color: Theme.text
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: modelData.local
                            text: qsTr("on disk")
                            color: Theme.success
                            font.pixelSize: Theme.fontSmall
                        }
                        Label {
                            visible: modelData.lfs || modelData.gitOid.length > 0
                            text: modelData.lfs ? qsTr("SHA-256 checked") : qsTr("SHA-1 checked")
                            color: Theme.textFaint
                            font.pixelSize: Theme.fontSmall
                            ToolTip.visible: lfsHover.hovered
                            ToolTip.text: modelData.lfs ? qsTr("The hub publishes this file's SHA-256; the download is verified against it.")
                                                        : qsTr("The hub publishes this file's git SHA-1; the download is verified against it.")
                            HoverHandler { id: lfsHover }
                        }
                        Label {
                            text: Format.bytes(modelData.size)
                            color: Theme.textMuted
                            horizontalAlignment: Text.AlignRight
                            Layout.preferredWidth: 90
                        }
                    }
                }

                // Progress of the running (or last) download.
                ColumnLayout {
                    visible: page.downloads.downloading || page.interrupted || page.finishedFolder.length > 0
                    Layout.fillWidth: true
                    Layout.topMargin: 6
                    spacing: 6
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            objectName: "downloadFile"
                            text: !page.downloads.downloading && page.finishedFolder.length > 0 ? qsTr("Done")
                                  : page.downloads.currentFile
                            color: Theme.text
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Label {
                            text: qsTr("%1 of %2").arg(Format.bytes(page.downloads.bytesDone)).arg(Format.bytes(page.downloads.bytesTotal))
                                  + (page.downloads.bytesPerSecond > 0 ? "  ·  " + qsTr("%1/s").arg(Format.bytes(page.downloads.bytesPerSecond)) : "")
                                  + "  ·  " + Math.round(page.downloads.totalFraction * 100) + " %"
                                  + (page.downloads.downloading && page.downloads.attempt > 1
                                     ? "  ·  " + qsTr("attempt %1 of %2").arg(page.downloads.attempt).arg(page.downloads.maxAttempts) : "")
                            color: Theme.textMuted
                        }
                    }
                    Label {
                        // Why the bar stands still: the hub or the network failed and the next attempt waits.
                        objectName: "downloadRetry"
                        visible: text.length > 0
                        text: page.downloads.downloading ? page.downloads.retryMessage : ""
                        color: Theme.warning
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        // Hashing a copy already on disk or in the Hugging Face cache before trusting it.
                        objectName: "downloadVerifying"
                        visible: page.downloads.downloading && page.downloads.verifying
                        text: qsTr("Checking the copy already on disk: %1 %").arg(Math.round(page.downloads.fileFraction * 100))
                        color: Theme.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    ProgressBar {
                        id: progress
                        objectName: "downloadProgress"
                        Layout.fillWidth: true
                        value: page.downloads.totalFraction
                        background: Rectangle {
                            implicitHeight: 8
                            radius: 4
                            color: Theme.surfaceAlt
                        }
                        contentItem: Item {
                            Rectangle {
                                width: progress.visualPosition * parent.width
                                height: parent.height
                                radius: 4
                                color: page.interrupted && !page.downloads.downloading ? Theme.warning : Theme.accent
                            }
                        }
                    }
                }

                RowLayout {
                    spacing: Theme.gap
                    Layout.topMargin: 6
                    AccentButton {
                        objectName: "downloadButton"
                        text: page.interrupted ? qsTr("Resume") : qsTr("Download")
                        iconName: "download"
                        enabled: !page.downloads.busy && page.chosen.length > 0
                        onClicked: {
                            page.finishedFolder = ""
                            page.downloads.download(page.chosen)
                        }
                    }
                    PlainButton {
                        objectName: "cancelDownloadButton"
                        visible: page.downloads.downloading
                        text: qsTr("Cancel")
                        iconName: "close"
                        onClicked: page.downloads.cancel()
                    }
                    Label {
                        text: page.chosen.length > 0
                              ? qsTr("%n file(s) chosen, %1", "", page.chosen.length).arg(Format.bytes(page.downloads.files.filter(f => page.chosen.indexOf(f.path) >= 0).reduce((sum, f) => sum + f.size, 0)))
                              : qsTr("Tick the files to download.")
                        color: Theme.textMuted
                    }
                }
            }
        }
    }
}
