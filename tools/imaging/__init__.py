"""Map pictures composed on this server: where a view falls on the web-Mercator tile grid, which
tiles cover it, and the picture stitched from them with the caller's markers, route and area
drawn on it (tomtom-map-image).

Plain Python and Pillow: nothing here talks to TomTom or knows a tool. `view` is the geometry
(pure arithmetic, cheap); `canvas` decodes, stitches and draws (CPU: callers run it off the
event loop).
"""
