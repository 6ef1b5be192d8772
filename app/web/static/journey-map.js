// The journey map that pans and zooms: Leaflet (served from our own origin) over the
// hosted tiles, the route as a line and each stop as a numbered marker, fitted to the
// journey. The page works without it: the server draws the same journey as an SVG,
// which this script hides once its map stands (and leaves alone if anything fails).
// Everything comes from the figure's data attributes: the pages' CSP runs no inline script.
(function () {
  "use strict";

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (letter) {
      return "&#" + letter.charCodeAt(0) + ";";
    });
  }

  function stopIcon(number, last) {
    return window.L.divIcon({
      className: "journey-stop" + (last ? " journey-stop-last" : ""),
      html: String(number), // a number only: no markup from the data reaches innerHTML
      iconSize: [26, 26],
      iconAnchor: [13, 13]
    });
  }

  function build(figure) {
    var L = window.L;
    var data = figure.dataset;
    var stops = JSON.parse(data.stops);
    var host = document.createElement("div");
    host.className = "journey-map";
    host.setAttribute("role", "region");
    host.setAttribute("aria-label", data.label);
    figure.insertBefore(host, figure.firstChild);

    var maxZoom = parseInt(data.maxZoom, 10);
    var map = L.map(host, {
      maxZoom: maxZoom,
      minZoom: 1,
      scrollWheelZoom: false, // the page scrolls under a wheel; buttons, pinch and keys zoom
      zoomControl: false,
      attributionControl: false
    });
    L.control.zoom({ zoomInTitle: data.zoomIn, zoomOutTitle: data.zoomOut }).addTo(map);
    L.control.attribution({ prefix: "Leaflet" }).addTo(map);
    L.tileLayer(data.tiles, {
      maxZoom: maxZoom,
      attribution: escapeHtml(data.attribution)
    }).addTo(map);

    var points = stops.map(function (stop) {
      return [stop[0], stop[1]];
    });
    if (points.length > 1) {
      L.polyline(points, {
        color: "#b03a2e",
        weight: 3,
        dashArray: "6 4",
        lineJoin: "round",
        className: "journey-route"
      }).addTo(map);
    }
    stops.forEach(function (stop, index) {
      var number = index + 1;
      L.marker(points[index], {
        icon: stopIcon(number, index === stops.length - 1),
        title: number + ". " + (stop[2] || data.unnamed),
        alt: String(number),
        riseOnHover: true
      }).addTo(map);
    });

    function noteZoom() {
      host.dataset.zoom = String(map.getZoom());
    }
    map.on("zoomend", noteZoom);
    if (points.length > 1) {
      map.fitBounds(L.latLngBounds(points), { padding: [32, 32], maxZoom: maxZoom });
    } else {
      map.setView(points[0], parseInt(data.zoom, 10));
    }
    noteZoom();
    figure.classList.add("has-live-map");
  }

  function start() {
    var figure = document.querySelector("figure[data-journey-map]");
    if (!figure || !window.L) {
      return; // no map on this page, or Leaflet did not load: the SVG stays
    }
    try {
      build(figure);
    } catch (error) {
      figure.classList.remove("has-live-map");
      var host = figure.querySelector(".journey-map");
      if (host) {
        host.remove();
      }
      throw error;
    }
  }

  start();
})();
