import QtQuick
import QtTest
import Kiln
import Kiln.Ui

Item {
    width: 1100
    height: 700

    EngineController { id: engine }
    AppSettings { id: settings }
    ChatController {
        id: chat
        engine: engine
        settings: settings
    }
    ChatPage {
        id: page
        anchors.fill: parent
        chat: chat
        engine: engine
    }

    TestCase {
        name: "ChatPage"
        when: windowShown

        function test_ctrlFSearchesTheConversations() {
            const search = findChild(page, "conversationSearch")
            verify(search !== null)
            page.focusComposer()
            verify(!search.activeFocus)
            keyClick(Qt.Key_F, Qt.ControlModifier)
            verify(search.activeFocus)
            keyClick(Qt.Key_L)
            compare(chat.conversations.searchText, "l")
            keyClick(Qt.Key_Escape)
            compare(chat.conversations.searchText, "")
        }

        function test_exportOffersASaveDialogWithANameAndExtension() {
            const dialog = findChild(page, "exportDialog")
            verify(dialog !== null)
            findChild(page, "chatPane").exportAs("markdown")
            compare(dialog.fileMode, 2)  // FileDialog.SaveFile
            compare(dialog.defaultSuffix, "md")
            const name = decodeURIComponent(dialog.selectedFile.toString())
            verify(name.endsWith("/Conversation.md"), name)
            verify(name.startsWith("file:///"), name)
            dialog.close()
            findChild(page, "chatPane").exportAs("json")
            compare(dialog.defaultSuffix, "json")
            verify(decodeURIComponent(dialog.selectedFile.toString()).endsWith(".json"))
            dialog.close()
        }

        function test_withoutAModelTheAttachButtonSaysWhy() {
            const composer = findChild(page, "composer")
            verify(!engine.modelLoaded)
            verify(!composer.canAttach)
            verify(!findChild(composer, "attachButton").enabled)
            verify(composer.attachTip.indexOf("Load a model that can see images") >= 0, composer.attachTip)
            const dialog = findChild(page, "imageDialog")
            compare(dialog.fileMode, 1)  // FileDialog.OpenFiles: several at once
        }

        function test_theOldKeyboardSettingReachesTheComposer() {
            const composer = findChild(page, "composer")
            settings.ctrlEnterSends = true
            verify(composer.ctrlEnterSends)
            verify(composer.placeholder.indexOf("Ctrl+Enter") >= 0, composer.placeholder)
            settings.ctrlEnterSends = false
            verify(!composer.ctrlEnterSends)
            verify(composer.placeholder.indexOf("Shift+Enter") >= 0, composer.placeholder)
        }
    }
}
