/* The tool-surface admin's forms, no framework; every form works without this script.
   - A confirmation (`data-confirm-for="live deprecated"`) is shown with the form as soon as the
     picked name needs it, and hidden when it does not.
   - An alias's argument mapping becomes pairs of pickers (the old name's inputs, the target's
     inputs or "leave it out"), each checked as you type with the server's own verdicts; the
     pairs are written back into the text field (`old = new` a line), which is what is posted. */
(function () {
  "use strict";

  function statusOf(form) {
    var picker = form.querySelector("select[data-statuses]");
    if (!picker || !picker.value) return "";
    try {
      return JSON.parse(picker.getAttribute("data-statuses"))[picker.value] || "";
    } catch (e) {
      return "";
    }
  }

  function setUpConfirmations(form) {
    var boxes = form.querySelectorAll("input[data-confirm-for]");
    var picker = form.querySelector("select[data-statuses]");
    if (!boxes.length || !picker) return;
    function update() {
      var status = statusOf(form);
      boxes.forEach(function (box) {
        var row = box.closest(".form-row") || box.parentElement;
        var needed = box.getAttribute("data-confirm-for").split(" ").indexOf(status) !== -1;
        var inError = row.classList.contains("errors");
        row.hidden = !(needed || inError || box.checked);
        if (needed) row.setAttribute("data-needed", picker.value);
      });
    }
    picker.addEventListener("change", update);
    update();
  }

  // --- The argument mapping ----------------------------------------------------------------

  var LEAVE_OUT = "\u0000leave-out";

  function parsePairs(text) {
    var pairs = [];
    text.split(/\r?\n/).forEach(function (line) {
      if (!line.trim()) return;
      var at = line.indexOf("=");
      if (at === -1) {
        pairs.push({ old: line.trim(), new: "" });
        return;
      }
      var value = line.slice(at + 1).trim();
      pairs.push({ old: line.slice(0, at).trim(), new: value === "" ? LEAVE_OUT : value });
    });
    if (text.trim().charAt(0) === "{") {
      try {
        var data = JSON.parse(text);
        pairs = Object.keys(data).map(function (old) {
          return { old: old, new: data[old] === null || data[old] === "" ? LEAVE_OUT : data[old] };
        });
      } catch (e) {
        /* left as lines: the server names the problem */
      }
    }
    return pairs;
  }

  /* The server's verdicts, word for word (governance.admin.mapping, governance.rules.alias_problems). */
  function verdict(pair, seen, target, inputs) {
    if (!pair.old) return { ok: false, text: "Pick the old input." };
    if (!pair.new) return { ok: false, text: "Pick what " + pair.old + " becomes, or leave it out." };
    if (seen[pair.old] > 1) return { ok: false, text: pair.old + " is mapped twice." };
    if (pair.new === LEAVE_OUT) {
      return { ok: true, text: "OK: " + pair.old + " is left out of the call." };
    }
    if (pair.new === pair.old) return { ok: false, text: pair.old + " is mapped to itself." };
    if (!target) return { ok: false, text: "Pick the target first." };
    if (inputs.indexOf(pair.new) === -1) {
      return { ok: false, text: pair.new + " (for " + pair.old + ") is not an input of " + target + "." };
    }
    return { ok: true, text: "OK: " + pair.old + " is sent as " + pair.new + "." };
  }

  function option(value, label, selected) {
    var element = document.createElement("option");
    element.value = value;
    element.textContent = label;
    element.selected = selected;
    return element;
  }

  function setUpMapping(box) {
    var form = box.closest("form");
    var text = document.getElementById(box.getAttribute("data-field"));
    var table = box.querySelector(".mapping-pairs");
    var body = table.querySelector("tbody");
    var tools = box.querySelector(".mapping-tools");
    var summary = box.querySelector(".mapping-summary");
    var inputs = JSON.parse(box.getAttribute("data-inputs") || "{}");
    var pairs = parsePairs(text.value);

    function oldName() {
      if (box.getAttribute("data-old-name")) return box.getAttribute("data-old-name");
      var picker = form.querySelector("#id_tool");
      var typed = form.querySelector("#id_name");
      return (picker && picker.value) || (typed && typed.value.trim()) || "";
    }
    function target() {
      var picker = form.querySelector("#id_target");
      return picker ? picker.value : "";
    }

    function write() {
      // Only whole pairs are posted: a row still missing a side is not a mapping yet.
      text.value = pairs
        .filter(function (pair) { return pair.old && pair.new; })
        .map(function (pair) { return pair.old + " =" + (pair.new === LEAVE_OUT ? "" : " " + pair.new); })
        .join("\n");
    }

    function render() {
      var old = oldName();
      var goal = target();
      var oldInputs = inputs[old] || null;
      var newInputs = inputs[goal] || [];
      var seen = {};
      pairs.forEach(function (pair) { if (pair.old) seen[pair.old] = (seen[pair.old] || 0) + 1; });
      body.textContent = "";
      var problems = 0;
      pairs.forEach(function (pair, index) {
        var row = document.createElement("tr");
        var oldCell = document.createElement("td");
        var field;
        if (oldInputs) {
          field = document.createElement("select");
          field.appendChild(option("", "— pick —", !pair.old));
          var known = oldInputs.slice();
          if (pair.old && known.indexOf(pair.old) === -1) known.unshift(pair.old);
          known.forEach(function (name) { field.appendChild(option(name, name, name === pair.old)); });
        } else {
          field = document.createElement("input");
          field.type = "text";
          field.maxLength = 128;
          field.placeholder = "old input";
          field.value = pair.old;
        }
        field.className = "mapping-old";
        field.setAttribute("aria-label", "Old input " + (index + 1) + (old ? " of " + old : ""));
        field.addEventListener(field.tagName === "SELECT" ? "change" : "input", function () {
          pair.old = field.value.trim();
          write();
          render();
          var again = body.querySelectorAll(".mapping-old")[index];
          if (again && again.tagName === "INPUT") {
            again.focus();
            again.setSelectionRange(again.value.length, again.value.length);
          }
        });
        oldCell.appendChild(field);

        var newCell = document.createElement("td");
        var choice = document.createElement("select");
        choice.className = "mapping-new";
        choice.setAttribute("aria-label", "New input " + (index + 1) + (goal ? " of " + goal : ""));
        choice.appendChild(option("", "— pick —", !pair.new));
        choice.appendChild(option(LEAVE_OUT, "(leave it out)", pair.new === LEAVE_OUT));
        var offered = newInputs.slice();
        if (pair.new && pair.new !== LEAVE_OUT && offered.indexOf(pair.new) === -1) offered.unshift(pair.new);
        offered.forEach(function (name) { choice.appendChild(option(name, name, name === pair.new)); });
        choice.addEventListener("change", function () {
          pair.new = choice.value;
          write();
          render();
        });
        newCell.appendChild(choice);

        var checkCell = document.createElement("td");
        var said = verdict(pair, seen, goal, newInputs);
        if (!said.ok) problems += 1;
        checkCell.className = "mapping-verdict " + (said.ok ? "ok" : "problem");
        checkCell.textContent = said.text;

        var removeCell = document.createElement("td");
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "mapping-remove";
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", "Remove pair " + (index + 1));
        remove.addEventListener("click", function () {
          pairs.splice(index, 1);
          write();
          render();
        });
        removeCell.appendChild(remove);

        row.appendChild(oldCell);
        row.appendChild(newCell);
        row.appendChild(checkCell);
        row.appendChild(removeCell);
        body.appendChild(row);
      });
      table.hidden = pairs.length === 0;
      summary.textContent = pairs.length === 0
        ? "No argument renamed: every input passes as sent."
        : problems === 0
          ? pairs.length + " pair" + (pairs.length === 1 ? "" : "s") + ": all fine."
          : problems + " of " + pairs.length + " pair" + (pairs.length === 1 ? "" : "s") + " to fix.";
    }

    box.querySelector(".mapping-add").addEventListener("click", function () {
      pairs.push({ old: "", new: "" });
      render();
      var fields = body.querySelectorAll(".mapping-old");
      if (fields.length) fields[fields.length - 1].focus();
    });
    ["#id_tool", "#id_name", "#id_target"].forEach(function (selector) {
      var element = form.querySelector(selector);
      if (element) element.addEventListener(element.tagName === "SELECT" ? "change" : "input", render);
    });
    text.hidden = true;
    tools.hidden = false;
    render();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form").forEach(setUpConfirmations);
    document.querySelectorAll(".argument-mapping").forEach(setUpMapping);
  });
})();
