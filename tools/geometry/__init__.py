"""Pure geometry helpers for tool answers (numpy and shapely, no Django).

``simplify`` is the entry point of the vertex cap (`cap_geometry`, `simplify_indices`); the
parts it is built from, each using only those above it (import-linter checks this):

- ``positions``: GeoJSON positions checked into arrays, rounded for output;
  ``sphere``: the Earth sphere, unit vectors, the local equirectangular projection.
- ``compiled``: the C kernel of the search and of reading positions, where it was built.
- ``douglas_peucker``: the anchored priority Douglas-Peucker on one path;
  ``error_bound``: the metre bounds on what simplifying and rounding moved.
- ``paths``: one path's budget, simplification and rounding.
- ``polygons``: rings closed, and grown until the polygon stays valid.

``circle`` draws a circle on the sphere as a polygon ring.
"""
