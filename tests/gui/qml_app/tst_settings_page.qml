import QtQuick
import QtTest
import Kiln
import Kiln.Ui

Item {
    width: 1100
    height: 900

    EngineController { id: engine }
    AppSettings { id: settings }
    HardwareMonitor { id: hardware; engine: engine }
    SettingsPage {
        id: page
        anchors.fill: parent
        settings: settings
        engine: engine
        hardware: hardware
    }

    TestCase {
        name: "SettingsPage"
        when: windowShown

        function initTestCase() {
            engine.load(fixtureModel, "fp16", "cpu", "auto", 1024, 1)
            tryVerify(() => engine.modelLoaded, 30000, "the fixture loads")
        }

        function test_answersRunToTheEndOfTheTurnByDefault() {
            const row = findChild(page, "maxTokensRow")
            compare(settings.maxTokens, 0)
            compare(findChild(page, "maxTokensBox").displayText, "End of turn")
            // The cap the user can see: this load's context.
            verify(row.description.indexOf("1024") >= 0, row.description)
            settings.maxTokens = 256
            verify(row.description.indexOf("1024") < 0, row.description)
            settings.maxTokens = 0
        }

        function test_aContextPastTheTrainedLengthWarns() {
            const row = findChild(page, "contextLengthRow")
            compare(engine.modelInfo.maxContext, 4096)
            settings.contextLength = 4096
            verify(row.description.indexOf("4096") < 0, row.description)
            settings.contextLength = 8192
            verify(row.description.indexOf("trained for") >= 0, row.description)
            verify(row.description.indexOf("4096") >= 0, row.description)
            settings.contextLength = 0
        }

        // Left to the engine, the context is the model's own as far as memory holds it: the tiny
        // fixture's 4096 fit anywhere, and the row says that is what it got.
        function test_theDefaultContextIsTheModelsOwn() {
            const row = findChild(page, "contextLengthRow")
            compare(settings.contextLength, 0)
            engine.load(fixtureModel, "fp16", "cpu", "auto", settings.contextLength, 1)
            tryVerify(() => engine.modelLoaded && engine.modelInfo.contextLength === 4096, 30000, "loaded with its own context")
            verify(row.description.indexOf("all 4096 tokens it was trained for") >= 0, row.description)
            engine.load(fixtureModel, "fp16", "cpu", "auto", 1024, 1)  // as the other tests expect
            tryVerify(() => engine.modelLoaded && engine.modelInfo.contextLength === 1024, 30000)
        }
    }
}
