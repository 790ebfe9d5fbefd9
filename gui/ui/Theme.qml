// Colours, sizes and fonts for both themes. Main.qml sets `dark`; everything else reads.
pragma Singleton
import QtQuick

QtObject {
    property bool dark: false

    // Surfaces, from the window down to the code blocks.
    readonly property color window: dark ? "#16181b" : "#f5f6f8"
    readonly property color sidebar: dark ? "#1c1f23" : "#eceef1"
    readonly property color surface: dark ? "#212429" : "#ffffff"
    readonly property color surfaceAlt: dark ? "#282c32" : "#f2f4f6"
    readonly property color hover: dark ? "#2d3238" : "#e4e7eb"
    readonly property color border: dark ? "#343a41" : "#dadee3"
    readonly property color codeBackground: dark ? "#131517" : "#f3f4f6"

    readonly property color text: dark ? "#e7e9ec" : "#1c2026"
    readonly property color textMuted: dark ? "#9ba2ac" : "#5d6672"
    readonly property color textFaint: dark ? "#6f7782" : "#8a929c"

    // The kiln's glow: one accent, used sparingly.
    readonly property color accent: dark ? "#e8873f" : "#c2581a"
    readonly property color accentHover: dark ? "#f09a57" : "#a94b14"
    readonly property color accentSoft: dark ? "#3b2a1d" : "#fbe9dc"
    readonly property color accentText: "#ffffff"

    readonly property color userBubble: dark ? "#2a3545" : "#e8eef7"
    readonly property color danger: dark ? "#f0787f" : "#b3261e"
    readonly property color dangerSoft: dark ? "#3d2224" : "#fbe4e2"
    readonly property color warning: dark ? "#e6c05c" : "#8a6100"
    readonly property color warningSoft: dark ? "#3a3220" : "#fdf3d7"
    readonly property color success: dark ? "#7cc98c" : "#2e7d32"

    // Chart series: distinguishable in both themes, accent first.
    readonly property var series: dark
        ? ["#e8873f", "#5fa8e8", "#7cc98c", "#c792ea", "#e6c05c", "#f0787f", "#56c7c0", "#a0a8b3"]
        : ["#c2581a", "#2f6fb3", "#2e7d32", "#7b4fb0", "#a07800", "#b3261e", "#00838f", "#6b7480"]
    function seriesColor(i) { return series[i % series.length] }

    // Spacing on a 4 px grid.
    readonly property int gap: 8
    readonly property int padding: 16
    readonly property int pagePadding: 28
    readonly property int radius: 8
    readonly property int radiusSmall: 5

    readonly property int fontSmall: 12
    readonly property int fontBody: 14
    readonly property int fontTitle: 17
    readonly property int fontHeading: 22
    readonly property string monoFamily: "monospace"
}
