// Under an answer: how long it was, how soon it started and how fast it came. An answer stopped
// before its first token has no such numbers: it says so instead.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Label {
    property int tokens: 0
    property real timeToFirstTokenMs: 0
    property real tokensPerSecond: 0
    property string stopReason

    text: tokens === 0
          ? (stopReason === "cancelled" ? qsTr("Stopped before the answer began") : "")
          : qsTr("%n token(s)", "", tokens) + "  ·  "
          + qsTr("first token %1").arg(Format.milliseconds(timeToFirstTokenMs)) + "  ·  "
          + qsTr("%1 tokens/s").arg(Format.number(tokensPerSecond, 1))
          + (stopReason === "cancelled" ? "  ·  " + qsTr("stopped") : "")
          + (stopReason === "max_tokens" ? "  ·  " + qsTr("length limit reached") : "")
          + (stopReason === "context_full" ? "  ·  " + qsTr("context full") : "")
    font.pixelSize: Theme.fontSmall
    color: Theme.textFaint
}
