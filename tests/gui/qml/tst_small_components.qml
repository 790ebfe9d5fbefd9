import QtQuick
import QtTest
import Kiln.Ui

Item {
    width: 800
    height: 600

    SegmentedChoice {
        id: choice
        options: [{ value: "fp16", label: "FP16" }, { value: "int8", label: "INT8" },
                  { value: "int4", label: "INT4", enabled: false, tip: "not here" }]
        value: "int8"
    }
    SignalSpy { id: chosen; target: choice; signalName: "chosen" }

    LineChart {
        id: chart
        y: 60
        width: 400
        height: 200
        title: "Speed"
        unit: "tok/s"
    }

    ConversationItem {
        id: conversation
        y: 280
        width: 280
        title: "Old title"
        preview: "last words"
    }
    SignalSpy { id: renamed; target: conversation; signalName: "renamed" }

    StackedBars {
        id: bars
        y: 360
        width: 600
        keys: ["matmul", "attention"]
        rows: [{ label: "0", ms: 6, segments: [{ op: "matmul", ms: 3 }, { op: "attention", ms: 3 }] },
               { label: "1", ms: 3, segments: [{ op: "matmul", ms: 3 }] }]
    }

    FactGrid {
        id: facts
        y: 480
        width: 400
    }

    SliderRow {
        id: sliderRow
        x: 300
        y: 280
        width: 490
        label: "Top-p"
        value: 0.95
        resettable: true
        isDefault: true
        defaultText: "0.95 (model default)"
    }
    SignalSpy { id: resetRequested; target: sliderRow; signalName: "resetRequested" }

    TestCase {
        name: "SmallComponents"
        when: windowShown

        function test_segmentedChoiceReportsTheClickedOption() {
            mouseClick(findChild(choice, "option_fp16"))
            compare(chosen.count, 1)
            compare(chosen.signalArguments[0][0], "fp16")
            mouseClick(findChild(choice, "option_int8"))  // already chosen: nothing to report
            compare(chosen.count, 1)
            mouseClick(findChild(choice, "option_int4"))  // disabled
            compare(chosen.count, 1)
        }

        function test_lineChartShowsTheLatestValue() {
            chart.points = []
            verify(!findChild(chart, "latestValue").visible)
            chart.points = [Qt.point(0, 10), Qt.point(1, 20), Qt.point(2, 12.5)]
            const latest = findChild(chart, "latestValue")
            verify(latest.visible)
            compare(latest.text, "12.5 tok/s")
            verify(chart.maxY >= 20)  // the axis holds the highest point
        }

        function test_renameInPlace() {
            conversation.startRename()
            const field = findChild(conversation, "renameField")
            verify(field.visible)
            compare(field.text, "Old title")
            keyClick(Qt.Key_N)
            keyClick(Qt.Key_E)
            keyClick(Qt.Key_W)
            keyClick(Qt.Key_Return)
            compare(renamed.count, 1)
            compare(renamed.signalArguments[0][0], "new")
            verify(!conversation.editing)
        }

        function test_escapeKeepsTheOldTitle() {
            renamed.clear()
            conversation.startRename()
            keyClick(Qt.Key_X)
            keyClick(Qt.Key_Escape)
            compare(renamed.count, 0)
            verify(!conversation.editing)
        }

        function test_stackedBarsShareOneScale() {
            const segment = findChild(bars, "segment_attention")
            const track = segment.parent.parent
            // Layer 0 (6 ms) spans the track; its attention half is half the track.
            fuzzyCompare(segment.width, track.width / 2, 0.5)
        }

        function test_factGridLeavesOutEmptyValues() {
            facts.facts = [{ label: "A", value: "1" }, { label: "B", value: "2" }]
            tryVerify(() => facts.implicitHeight > 0)
            const two = facts.implicitHeight
            facts.facts = [{ label: "A", value: "1" }, { label: "Empty", value: "" }, { label: "B", value: "2" }]
            wait(0)
            compare(facts.implicitHeight, two)
            facts.facts = [{ label: "A", value: "1" }]
            tryVerify(() => facts.implicitHeight < two)
        }

        function test_sliderRowAtItsDefaultAndBack() {
            const shown = findChild(sliderRow, "sliderValue")
            const reset = findChild(sliderRow, "sliderReset")
            compare(shown.text, "0.95 (model default)")
            verify(!reset.enabled)  // already at the default: nothing to go back to
            mouseClick(reset)
            compare(resetRequested.count, 0)
            sliderRow.isDefault = false  // the user chose a value
            verify(shown.text.indexOf("default") < 0)
            verify(reset.enabled && reset.opacity > 0)
            mouseClick(reset)
            compare(resetRequested.count, 1)
            sliderRow.isDefault = true
        }

        function test_themesDiffer() {
            const light = String(Theme.window)
            Theme.dark = true
            verify(String(Theme.window) !== light)
            verify(!Qt.colorEqual(Theme.text, Theme.window))
            Theme.dark = false
            compare(String(Theme.window), light)
        }
    }
}
