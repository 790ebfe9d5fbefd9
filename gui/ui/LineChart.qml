// A small line chart over time: grid, y labels, the line with a soft fill, the latest value.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Item {
    id: chart
    property string title
    property string unit
    property var points: []          // [{x, y}] (QPointF from C++), x increasing
    property color color: Theme.accent
    property int decimals: 1
    property real minimumMax: 1      // the y axis never shrinks below this
    property string emptyText: qsTr("No data yet")
    property string xLabel

    readonly property real latest: points.length > 0 ? points[points.length - 1].y : 0
    readonly property real maxY: {
        let m = minimumMax
        for (let i = 0; i < points.length; ++i) m = Math.max(m, points[i].y)
        return niceCeiling(m * 1.1)
    }
    function niceCeiling(v) {
        const magnitude = Math.pow(10, Math.floor(Math.log10(v)))
        for (const step of [1, 2, 2.5, 5, 10])
            if (step * magnitude >= v) return step * magnitude
        return 10 * magnitude
    }

    implicitWidth: 360
    implicitHeight: 190
    onPointsChanged: canvas.requestPaint()
    onMaxYChanged: canvas.requestPaint()
    onColorChanged: canvas.requestPaint()
    Connections {
        target: Theme
        function onDarkChanged() { canvas.requestPaint() }
    }

    Label {
        id: titleLabel
        text: chart.title
        font.pixelSize: Theme.fontSmall
        font.weight: Font.DemiBold
        color: Theme.textMuted
    }
    Label {
        objectName: "latestValue"
        anchors.right: parent.right
        anchors.baseline: titleLabel.baseline
        visible: chart.points.length > 0 && chart.title.length > 0
        text: Format.number(chart.latest, chart.decimals) + " " + chart.unit
        font.pixelSize: Theme.fontTitle
        font.weight: Font.DemiBold
        color: chart.color
    }

    Canvas {
        id: canvas
        anchors.fill: parent
        anchors.topMargin: chart.title.length > 0 ? 30 : 0
        readonly property int leftAxis: 44
        readonly property int bottomAxis: chart.xLabel.length > 0 ? 18 : 4

        onPaint: {
            const ctx = getContext("2d")
            ctx.reset()
            const top = 8  // room for the top label
            const w = width - leftAxis, h = height - bottomAxis - top
            ctx.translate(0, top)
            if (w <= 0 || h <= 0)
                return
            ctx.font = "11px sans-serif"
            ctx.textBaseline = "middle"
            ctx.textAlign = "right"
            for (let i = 0; i <= 4; ++i) {
                const y = Math.round(h - i * h / 4) + 0.5
                ctx.strokeStyle = Theme.border
                ctx.lineWidth = 1
                ctx.beginPath()
                ctx.moveTo(leftAxis, y)
                ctx.lineTo(width, y)
                ctx.stroke()
                ctx.fillStyle = Theme.textFaint
                const v = chart.maxY * i / 4
                ctx.fillText(chart.maxY < 10 ? Format.number(v, v % 1 === 0 ? 0 : 1) : Format.count(v), leftAxis - 6, y)
            }
            const pts = chart.points
            if (pts.length < 2)
                return
            const x0 = pts[0].x, x1 = pts[pts.length - 1].x
            const sx = x => leftAxis + (x1 > x0 ? (x - x0) / (x1 - x0) : 0) * w
            const sy = y => h - Math.max(0, y) / chart.maxY * h
            ctx.beginPath()
            ctx.moveTo(sx(pts[0].x), h)
            for (let i = 0; i < pts.length; ++i) ctx.lineTo(sx(pts[i].x), sy(pts[i].y))
            ctx.lineTo(sx(x1), h)
            ctx.closePath()
            ctx.fillStyle = Qt.rgba(chart.color.r, chart.color.g, chart.color.b, 0.14)
            ctx.fill()
            ctx.beginPath()
            for (let i = 0; i < pts.length; ++i) {
                if (i === 0) ctx.moveTo(sx(pts[i].x), sy(pts[i].y))
                else ctx.lineTo(sx(pts[i].x), sy(pts[i].y))
            }
            ctx.strokeStyle = chart.color
            ctx.lineWidth = 2
            ctx.lineJoin = "round"
            ctx.stroke()
            if (chart.xLabel.length > 0) {
                ctx.textAlign = "left"
                ctx.fillStyle = Theme.textFaint
                ctx.fillText(Format.number(x0, 0), leftAxis, h + bottomAxis - 6)
                ctx.textAlign = "right"
                ctx.fillText(Format.number(x1, x1 - x0 < 10 ? 1 : 0) + " " + chart.xLabel, width, h + bottomAxis - 6)
            }
        }
    }
    Label {
        anchors.centerIn: canvas
        visible: chart.points.length < 2
        text: chart.emptyText
        color: Theme.textFaint
        font.pixelSize: Theme.fontSmall
    }
}
