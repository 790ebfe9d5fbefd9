// The open conversation: its title and system prompt, the messages, and the composer.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Rectangle {
    id: pane
    required property ChatController chat
    required property EngineController engine
    signal openModels()

    readonly property int contentWidth: Math.min(width - 2 * Theme.pagePadding, 820)
    function focusComposer() { composer.focusInput() }

    color: Theme.window

    // Export: a Save dialog with the conversation's title as the name and the format's extension.
    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property string format: "markdown"
        title: format === "json" ? qsTr("Export the conversation as JSON") : qsTr("Export the conversation as Markdown")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Save")
        defaultSuffix: format === "json" ? "json" : "md"
        nameFilters: format === "json" ? [qsTr("Kiln conversation (*.json)")] : [qsTr("Markdown (*.md)")]
        onAccepted: pane.chat.exportCurrent(selectedFile, format)
    }
    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a conversation")
        fileMode: FileDialog.OpenFile
        acceptLabel: qsTr("Import")
        nameFilters: [qsTr("Kiln conversation (*.json)")]
        onAccepted: pane.chat.importFrom(selectedFile)
    }
    FileDialog {
        id: imageDialog
        objectName: "imageDialog"
        title: qsTr("Attach images")
        fileMode: FileDialog.OpenFiles
        acceptLabel: qsTr("Attach")
        nameFilters: [qsTr("Images (*.png *.jpg *.jpeg *.webp)")]
        onAccepted: { for (const file of selectedFiles) pane.chat.attachImage(file) }
    }
    function exportAs(format) {
        exportDialog.format = format
        const suggested = pane.chat.suggestedExportFile(format)
        exportDialog.currentFolder = pane.chat.folderOf(suggested)
        exportDialog.selectedFile = suggested
        exportDialog.open()
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        // Header: title, the model in use, the system prompt switch.
        Rectangle {
            Layout.fillWidth: true
            implicitHeight: 56
            color: Theme.window
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: Theme.pagePadding
                anchors.rightMargin: Theme.padding
                spacing: 12
                Label {
                    objectName: "conversationTitle"
                    text: pane.chat.currentTitle.length > 0 ? pane.chat.currentTitle : qsTr("New chat")
                    font.pixelSize: Theme.fontTitle
                    font.weight: Font.DemiBold
                    color: Theme.text
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                ModelBadge {
                    engine: pane.engine
                    onClicked: pane.openModels()
                }
                IconButton {
                    id: moreButton
                    objectName: "conversationMenuButton"
                    iconName: "more"
                    tip: qsTr("Export or import")
                    onClicked: conversationMenu.popup(moreButton, 0, moreButton.height)
                    Menu {
                        id: conversationMenu
                        MenuItem {
                            objectName: "exportMarkdownItem"
                            text: qsTr("Export as Markdown…")
                            enabled: pane.chat.messages.count > 0
                            onTriggered: pane.exportAs("markdown")
                        }
                        MenuItem {
                            objectName: "exportJsonItem"
                            text: qsTr("Export as JSON…")
                            enabled: pane.chat.messages.count > 0
                            onTriggered: pane.exportAs("json")
                        }
                        MenuSeparator {}
                        MenuItem {
                            objectName: "importItem"
                            text: qsTr("Import a conversation…")
                            onTriggered: importDialog.open()
                        }
                    }
                }
                PlainButton {
                    objectName: "systemPromptButton"
                    text: qsTr("System prompt")
                    iconName: "edit"
                    implicitHeight: 32
                    highlighted: systemPrompt.visible
                    onClicked: systemPrompt.visible = !systemPrompt.visible
                }
            }
            Rectangle {
                anchors.bottom: parent.bottom
                width: parent.width
                height: 1
                color: Theme.border
            }
        }

        SystemPromptEditor {
            id: systemPrompt
            visible: false
            chat: pane.chat
            Layout.preferredWidth: pane.contentWidth
            Layout.alignment: Qt.AlignHCenter
            Layout.topMargin: 12
        }

        ColumnLayout {
            Layout.preferredWidth: pane.contentWidth
            Layout.alignment: Qt.AlignHCenter
            Layout.topMargin: visible ? 12 : 0
            visible: storageBanner.visible || errorBanner.visible || loadBanner.visible
            spacing: Theme.gap
            Banner {
                id: storageBanner
                objectName: "storageBanner"
                kind: "warning"
                Layout.fillWidth: true
                text: pane.chat.storageErrors.length === 0 ? ""
                      : qsTr("Some conversations could not be read and were left as they are:") + "\n"
                        + pane.chat.storageErrors.join("\n")
                onClosed: pane.chat.dismissStorageErrors()
            }
            Banner {
                id: errorBanner
                kind: "error"
                Layout.fillWidth: true
                text: pane.chat.lastError
                closable: false
                actionText: pane.engine.modelLoaded ? "" : qsTr("Open Models")
                onActionTriggered: pane.openModels()
            }
            Banner {
                id: loadBanner
                kind: "error"
                Layout.fillWidth: true
                closable: false
                text: pane.engine.lastError.length > 0 && !pane.engine.modelLoaded
                      ? qsTr("The model could not be loaded: %1").arg(pane.engine.lastError) : ""
                actionText: qsTr("Open Models")
                onActionTriggered: pane.openModels()
            }
        }

        // Messages.
        ListView {
            id: messages
            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: pane.chat.messages
            spacing: 18
            topMargin: 20
            bottomMargin: 20
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar {}
            // Follow the answer as it streams, unless the reader scrolled up.
            property bool following: true
            onMovementEnded: following = atYEnd
            onContentHeightChanged: if (following) positionViewAtEnd()
            onCountChanged: { following = true; positionViewAtEnd() }

            delegate: Item {
                id: row
                required property var model
                required property int index
                width: ListView.view.width
                implicitHeight: bubble.implicitHeight
                MessageBubble {
                    id: bubble
                    x: (row.width - width) / 2
                    width: pane.contentWidth
                    role: row.model.role
                    text: row.model.text
                    streaming: row.model.streaming
                    hasStats: row.model.hasStats
                    generatedTokens: row.model.generatedTokens
                    timeToFirstTokenMs: row.model.timeToFirstTokenMs
                    tokensPerSecond: row.model.tokensPerSecond
                    stopReason: row.model.stopReason
                    notes: row.model.notes
                    error: row.model.error
                    variant: row.model.variant
                    variantCount: row.model.variantCount
                    rolledOff: row.model.rolledOff
                    images: row.model.images
                    imageNames: row.model.imageNames
                    canSwitchVariant: !pane.chat.generating
                    onVariantRequested: v => pane.chat.switchVariant(row.index, v)
                    canEdit: !pane.chat.generating && pane.engine.modelLoaded
                    canRegenerate: !pane.chat.generating && pane.engine.modelLoaded && row.index === messages.count - 1
                    onEditSubmitted: text => pane.chat.editAndResend(row.index, text)
                    onRegenerateRequested: pane.chat.regenerate()
                }
            }

            EmptyState {
                anchors.centerIn: parent
                visible: messages.count === 0
                iconName: pane.engine.modelLoaded ? "chat" : "models"
                title: pane.engine.modelLoaded ? qsTr("Ask Gemma anything")
                     : pane.engine.loading ? qsTr("Loading the model…") : qsTr("No model loaded")
                text: pane.engine.modelLoaded
                      ? (composer.ctrlEnterSends
                         ? qsTr("Everything runs on this computer. Ctrl+Enter sends, Esc stops the answer.")
                         : qsTr("Everything runs on this computer. Enter sends, Shift+Enter starts a new line, Esc stops the answer."))
                      : pane.engine.loading ? "" : qsTr("Open a Gemma 3 model to start chatting.")
                actionText: pane.engine.modelLoaded || pane.engine.loading ? "" : qsTr("Open Models")
                onActionTriggered: pane.openModels()
            }
        }

        Composer {
            id: composer
            objectName: "composer"
            Layout.preferredWidth: pane.contentWidth
            Layout.alignment: Qt.AlignHCenter
            Layout.bottomMargin: 20
            generating: pane.chat.generating
            ready: pane.engine.modelLoaded
            ctrlEnterSends: pane.chat.settings ? pane.chat.settings.ctrlEnterSends : false
            images: pane.chat.pendingImages
            // A remote endpoint's model decides for itself; a local one says whether it sees.
            canAttach: pane.engine.modelLoaded && !pane.chat.generating
                       && (pane.engine.modelInfo.vision === true || pane.engine.remote)
            attachUnavailableReason: !pane.engine.modelLoaded ? qsTr("Load a model that can see images to attach one.")
                                   : pane.chat.generating ? qsTr("Wait for the answer to finish.")
                                   : qsTr("This model cannot see images: it has no vision tower (a GGUF model needs its mmproj file beside it).")
            onAttachRequested: imageDialog.open()
            onFilesDropped: urls => { for (const url of urls) pane.chat.attachImage(url) }
            onRemoveImageRequested: index => pane.chat.removePendingImage(index)
            onSendRequested: text => { if (pane.chat.send(text)) composer.clear() }
            onStopRequested: pane.chat.stop()
        }
    }
}
