// A line icon drawn from an SVG path on a 24 × 24 grid, in any colour (themes recolour it).
import QtQuick
import Kiln.Ui

Canvas {
    id: icon
    property string name
    property color color: Theme.text
    property real strokeWidth: 1.8
    property bool filled: name === "stop"

    readonly property var paths: ({
        "chat": "M4 5h16v11H10l-5 4v-4H4z",
        "models": "M12 3l8 4.5v9L12 21l-8-4.5v-9z M4 7.5l8 4.5 8-4.5 M12 12v9",
        "hardware": "M7 7h10v10H7z M10 10h4v4h-4z M10 3v4 M14 3v4 M10 17v4 M14 17v4 M3 10h4 M3 14h4 M17 10h4 M17 14h4",
        "profiler": "M4 20h16 M7 20v-7 M12 20V5 M17 20v-10",
        "settings": "M4 7h9 M19 7h1 M4 17h3 M13 17h7 M13 7a3 3 0 1 0 6 0a3 3 0 1 0 -6 0 M7 17a3 3 0 1 0 6 0a3 3 0 1 0 -6 0",
        "plus": "M12 5v14 M5 12h14",
        "search": "M5 11a6 6 0 1 0 12 0a6 6 0 1 0 -12 0 M15.5 15.5L20 20",
        "copy": "M9 9h11v11H9z M5 15H4V4h11v1",
        "edit": "M4 20l1-4L16 5l3 3L8 19z M14 7l3 3",
        "regenerate": "M19.5 13a7.5 7.5 0 1 1 -2.2 -6.5 M19 3.5v4.5h-4.5",
        "stop": "M7 7h10v10H7z",
        "send": "M12 19V5 M6 11l6-6 6 6",
        "trash": "M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13",
        "more": "M6 12h.01 M12 12h.01 M18 12h.01",
        "folder": "M3 6h6l2 2h10v11H3z",
        "file": "M6 3h8l4 4v14H6z M14 3v4h4",
        "close": "M6 6l12 12 M18 6L6 18",
        "chevron": "M6 9l6 6 6-6",
        "previous": "M15 6l-6 6 6 6",
        "next": "M9 6l6 6-6 6",
        "check": "M5 12.5l4.5 4.5L19 7.5",
        "warning": "M12 4l9 16H3z M12 10v4.5 M12 17.5h.01",
        "info": "M3 12a9 9 0 1 0 18 0a9 9 0 1 0 -18 0 M12 11v6 M12 7.5h.01",
        "unload": "M12 4v10 M7 9l5 5 5-5 M5 20h14",
        "export": "M12 15V4 M7 9l5-5 5 5 M5 20h14",
        "download": "M12 4v11 M7 10l5 5 5-5 M4 17v3h16v-3",
        "image": "M4 5h16v14H4z M4 16l5-5 4 4 2-2 5 5 M15 9h.01"
    })

    implicitWidth: 20
    implicitHeight: 20
    onColorChanged: requestPaint()
    onNameChanged: requestPaint()
    onWidthChanged: requestPaint()
    onHeightChanged: requestPaint()

    onPaint: {
        const ctx = getContext("2d")
        ctx.reset()
        const path = paths[name]
        if (!path)
            return
        ctx.scale(width / 24, height / 24)
        ctx.lineWidth = name === "more" ? 3.2 : strokeWidth
        ctx.lineCap = "round"
        ctx.lineJoin = "round"
        ctx.strokeStyle = color
        ctx.fillStyle = color
        ctx.path = path
        if (filled)
            ctx.fill()
        ctx.stroke()
    }
}
