// The trackable pages work without this script; with it, times show in the reader's own
// time zone and locale (the server writes them in UTC), and the "log a find" form gets a
// "Use my location" button that fills the coordinates from the browser's geolocation.
(function () {
  "use strict";

  function localTimes() {
    if (!window.Intl || !Intl.DateTimeFormat) {
      return;
    }
    var lang = document.documentElement.lang || undefined;
    var formats = {
      datetime: new Intl.DateTimeFormat(lang, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", timeZoneName: "short"
      }),
      date: new Intl.DateTimeFormat(lang, { year: "numeric", month: "short", day: "numeric" })
    };
    document.querySelectorAll("time[data-local]").forEach(function (element) {
      var format = formats[element.dataset.local];
      var instant = new Date(element.getAttribute("datetime"));
      if (!format || isNaN(instant.getTime())) {
        return;
      }
      element.title = element.textContent; // the UTC fallback stays at hand
      element.textContent = format.format(instant);
    });
  }

  function locateButton() {
    var form = document.querySelector("form.find-form");
    if (!form || !("geolocation" in navigator)) {
      return;
    }
    var status = form.querySelector(".locate-status");
    var latitude = form.querySelector("input[name=latitude]");
    var longitude = form.querySelector("input[name=longitude]");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "locate";
    button.textContent = form.dataset.button;
    status.before(button);
    button.addEventListener("click", function () {
      status.textContent = form.dataset.locating;
      button.disabled = true;
      navigator.geolocation.getCurrentPosition(
        function (position) {
          latitude.value = position.coords.latitude.toFixed(5);
          longitude.value = position.coords.longitude.toFixed(5);
          status.textContent = form.dataset.located;
          button.disabled = false;
        },
        function () {
          status.textContent = form.dataset.failed;
          button.disabled = false;
        },
        { enableHighAccuracy: true, timeout: 15000, maximumAge: 60000 }
      );
    });
  }

  localTimes();
  locateButton();
})();
