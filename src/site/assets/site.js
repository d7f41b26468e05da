// The account site's only script (served from /account/assets/, as the Content-Security-Policy requires): the copy
// button beside a newly created key. Every page works without it.
/* global document, navigator, window */
'use strict';

document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(target.textContent.trim()).then(
        function () {
          button.textContent = 'Copied';
        },
        function () {
          // no clipboard permission: select the text so that Ctrl+C / Cmd+C copies it
          var range = document.createRange();
          range.selectNodeContents(target);
          var selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          button.textContent = 'Press Ctrl+C to copy';
        },
      );
    });
  });
});
