// The trackable pages work without this script; with it, the journey-stop form gets a
// "Use my location" button that fills the coordinates from the browser's geolocation.
(function () {
  "use strict";
  var form = document.querySelector("form.stop-form");
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
  form.querySelector("button[type=submit]").before(button);
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
})();
