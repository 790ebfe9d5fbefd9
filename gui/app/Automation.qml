// Drives the app from the command line (--prompt, --screenshot, --quit): waits for the model,
// sends the prompt, waits for the answer, shows the requested page, prints what is on screen,
// saves a picture and quits. Used by the end-to-end test and the screenshot script.
import QtQuick
import Kiln
import Kiln.Ui

Item {
    id: automation
    required property var appWindow
    required property LaunchOptions launch
    required property EngineController engine
    required property ChatController chat
    property var downloads: null   // a DownloadController: the picture waits for its transfer
    signal pageRequested(string name)

    property bool sent: false
    property bool regenerated: false
    property bool finishing: false

    function say(line) { launch.report("kiln-desktop: " + line) }

    function finish(code) {
        if (finishing)
            return
        finishing = true
        pageRequested(launch.page.length > 0 ? launch.page : "chat")
        settle.code = code
        settle.start()
    }

    function maybeSend() {
        if (sent || !engine.modelLoaded)
            return
        if (launch.prompt.length === 0) {
            finish(0)
            return
        }
        sent = true
        chat.newConversation()
        if (!chat.send(launch.prompt)) {
            say("send-failed " + chat.lastError)
            finish(2)
        }
    }

    // Lets the page lay out and paint before the picture.
    Timer {
        id: settle
        property int code: 0
        interval: 700
        onTriggered: {
            if (automation.downloads && automation.downloads.busy) {
                restart()
                return
            }
            automation.say("window-title " + automation.appWindow.title)
            for (const text of automation.launch.visibleTexts(automation.appWindow.contentItem))
                automation.say("visible-text " + text.replace(/\n/g, "\\n"))
            if (automation.launch.screenshot.length > 0) {
                const ok = automation.launch.saveScreenshot(automation.appWindow, automation.launch.screenshot)
                automation.say((ok ? "screenshot " : "screenshot-failed ") + automation.launch.screenshot)
                if (!ok) code = 4
            }
            if (automation.launch.quitWhenDone)
                Qt.exit(code)
        }
    }
    Timer {
        interval: 120000
        running: automation.launch.quitWhenDone
        onTriggered: {
            automation.say("timeout")
            Qt.exit(3)
        }
    }

    Connections {
        target: automation.engine
        function onLoaded(info) {
            automation.say("loaded " + info.name + " " + info.precision + " " + info.backend)
            automation.maybeSend()
        }
        function onLoadFailed(message) {
            automation.say("load-failed " + message)
            automation.finish(2)
        }
    }
    Connections {
        target: automation.chat
        function onAnswerFinished(conversationId, stats) {
            automation.say("answer " + JSON.stringify(stats))
            if (automation.launch.regenerate && !automation.regenerated) {
                automation.regenerated = true
                if (automation.chat.regenerate())
                    return
                automation.say("regenerate-failed " + automation.chat.lastError)
            }
            automation.finish(0)
        }
        function onAnswerFailed(conversationId, message) {
            automation.say("answer-failed " + message)
            automation.finish(2)
        }
    }

    // After Main.qml started any load: without a model to wait for, the picture can be taken now.
    Timer {
        running: true
        interval: 300
        onTriggered: {
            if (!automation.engine.loading && !automation.engine.modelLoaded)
                automation.finish(automation.launch.prompt.length > 0 ? 2 : 0)
            else
                automation.maybeSend()
        }
    }
}
