// Inert text, shared by the viewer and the labelling page (oracleproto/view/inert.js, inserted into
// both pages where they say so). Strangers' text (search results, model output, question texts,
// display names) is only ever added as text nodes, and every character that could change how it or
// its neighbours read is shown as a small visible chip instead of acting: a bidi control reorders
// the text around it (a URL ending "\u202Egpj.exe" reads "exe.jpg"), zero-width and other invisible
// characters hide content, control characters and lone surrogates are not text, and bytes that were
// not UTF-8 arrive here as the lone surrogates U+DC80..U+DCFF (Python's surrogateescape).
var INERT_CANDIDATE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]/u;
var INERT_SCAN = new RegExp(INERT_CANDIDATE.source, "gu");
// Scripts that need ZWJ/ZWNJ inside words (Persian, Indic shaping): there, between two letters,
// the joiners are text and stay; anywhere else they only hide things.
var INERT_JOINING = /[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Nko}\p{scx=Mongolian}\p{scx=Devanagari}\p{scx=Bengali}\p{scx=Gurmukhi}\p{scx=Gujarati}\p{scx=Oriya}\p{scx=Tamil}\p{scx=Telugu}\p{scx=Kannada}\p{scx=Malayalam}\p{scx=Sinhala}\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tibetan}]/u;
var INERT_EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u;
var INERT_PICTO = /\p{Extended_Pictographic}/u;
// Selectors and joiners that modify the character before them: one after a visible base is text
// (an emoji's presentation, a Mongolian form); a run of them can carry hidden data, so it is marked.
var INERT_SELECTOR = /[\u034F\u180B-\u180D\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
var INERT_RTL = /[\p{scx=Arabic}\p{scx=Hebrew}\p{scx=Syriac}\p{scx=Thaana}\p{scx=Nko}\p{scx=Samaritan}\p{scx=Mandaic}\p{scx=Adlam}]/u;
var INERT_NAMES = {
  0x0000: "NULL", 0x0008: "BACKSPACE", 0x001B: "ESCAPE", 0x007F: "DELETE", 0x0085: "NEXT LINE",
  0x00AD: "SOFT HYPHEN", 0x034F: "COMBINING GRAPHEME JOINER", 0x061C: "ARABIC LETTER MARK",
  0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
  0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
  0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
  0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
  0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE", 0x2060: "WORD JOINER",
  0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE", 0x3164: "HANGUL FILLER", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE (BOM)",
  0xFFA0: "HALFWIDTH HANGUL FILLER"
};
function inertHex(cp, width) { var h = cp.toString(16).toUpperCase(); while (h.length < width) h = "0" + h; return h; }
function inertCodePointBefore(text, i) {
  if (i <= 0) return -1;
  var low = text.charCodeAt(i - 1);
  if (low >= 0xDC00 && low <= 0xDFFF && i >= 2) {
    var high = text.charCodeAt(i - 2);
    if (high >= 0xD800 && high <= 0xDBFF) return text.codePointAt(i - 2);
  }
  return low;
}
function inertIs(re, cp) { return cp >= 0 && re.test(String.fromCodePoint(cp)); }
// Why a candidate is marked ("" when it is text here and stays). ``prev``/``next`` are the code
// points around it (-1 at an end); ``afterSelector`` says the previous character was a kept selector.
function inertReason(cp, prev, next, afterSelector) {
  if (cp === 0x09 || cp === 0x0A || cp === 0x0D) return "";
  if (cp >= 0xDC80 && cp <= 0xDCFF) return "a byte that is not valid UTF-8 (shown as stored)";
  if (cp >= 0xD800 && cp <= 0xDFFF) return "a lone surrogate, which is not a character";
  if (cp === 0x200C || cp === 0x200D) {
    if (inertIs(INERT_JOINING, prev) && inertIs(INERT_JOINING, next)) return "";
    if (cp === 0x200D && inertIs(INERT_EMOJI, prev) && inertIs(INERT_PICTO, next)) return "";
    return "an invisible joiner";
  }
  if (INERT_SELECTOR.test(String.fromCodePoint(cp))) {
    if (prev >= 0 && !afterSelector && !INERT_CANDIDATE.test(String.fromCodePoint(prev)) && !/\s/.test(String.fromCodePoint(prev))) return "";
    return "an invisible selector (a run of them can hide data)";
  }
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200E || cp === 0x200F || cp === 0x061C) {
    return "a bidi control that would reorder the text around it";
  }
  if (cp >= 0xE0000 && cp <= 0xE007F) {
    var shown = cp >= 0xE0020 && cp <= 0xE007E ? " for \"" + String.fromCharCode(cp - 0xE0000) + "\"" : "";
    return "an invisible tag character" + shown;
  }
  if (cp === 0x2028 || cp === 0x2029) return "a line separator";
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return "a control character";
  if ((cp & 0xFFFE) === 0xFFFE || (cp >= 0xFDD0 && cp <= 0xFDEF)) return "a noncharacter";
  return "an invisible character";
}
function inertChip(cp, why) {
  var chip = document.createElement("span");
  var bad = cp >= 0xDC80 && cp <= 0xDCFF;
  var code = bad ? "0x" + inertHex(cp - 0xDC00, 2) : "U+" + inertHex(cp, 4);
  chip.className = "inert";
  chip.dir = "ltr";  // the chip's own text must not be mirrored inside right-to-left text
  chip.setAttribute("data-cp", inertHex(cp, 4));
  chip.title = code + (INERT_NAMES[cp] ? " " + INERT_NAMES[cp] : "") + " \u2014 " + why + "; shown here instead of acting";
  chip.textContent = "<" + code + ">";
  return chip;
}
// Most chips one value gets; past it, a hidden character shows as U+FFFD text and one last chip says
// how many did (a page of a million zero-width spaces must not become a million elements).
var INERT_MAX_CHIPS = 1000;
// Append ``text`` to ``parent`` as text nodes, with a chip for each neutralised character (a run of
// the same character is one chip with a count).
function inertFill(parent, text) {
  text = String(text);
  if (!INERT_CANDIDATE.test(text)) { parent.appendChild(document.createTextNode(text)); return parent; }
  var last = 0, keptSelectorEnd = -1, m, chip = null, chipCp = -1, chipEnd = -1, runs = 0, count = 0, over = 0, pending = "";
  function flush(upTo) {
    if (upTo > last) pending += text.slice(last, upTo);
    if (pending) { parent.appendChild(document.createTextNode(pending)); pending = ""; }
  }
  INERT_SCAN.lastIndex = 0;
  while ((m = INERT_SCAN.exec(text)) !== null) {
    var at = m.index, end = at + m[0].length, cp = m[0].codePointAt(0);
    var prev = inertCodePointBefore(text, at), next = end < text.length ? text.codePointAt(end) : -1;
    var why = inertReason(cp, prev, next, keptSelectorEnd === at);
    if (!why) {
      if (INERT_SELECTOR.test(m[0])) keptSelectorEnd = end;
      continue;
    }
    if (chip !== null && cp === chipCp && at === chipEnd) {
      count += 1;
      chip.textContent = chip.textContent.replace(/(?: \u00d7\d+)?>$/, " \u00d7" + count + ">");
      chip.setAttribute("data-count", String(count));
    } else if (runs >= INERT_MAX_CHIPS) {
      pending += text.slice(last, at) + "\uFFFD";
      over += 1;
      last = end;
      continue;
    } else {
      flush(at);
      chip = parent.appendChild(inertChip(cp, why));
      chipCp = cp;
      count = 1;
      runs += 1;
    }
    chipEnd = end;
    last = end;
  }
  flush(text.length);
  if (over) {
    var more = document.createElement("span");
    more.className = "inert";
    more.dir = "ltr";
    more.textContent = "<" + over + " more hidden characters shown as \uFFFD>";
    parent.appendChild(more);
  }
  return parent;
}
// An untrusted value inside our own words: its own bidi isolate (direction from its first strong
// character), so right-to-left text reads right to left and cannot reorder what surrounds it.
function inertIsolate(text, cls) {
  var bdi = document.createElement("bdi");
  bdi.className = "ut" + (cls ? " " + cls : "");
  return inertFill(bdi, text);
}
// A URL reads left to right part by part: each part holding right-to-left letters is isolated on its
// own, so such letters cannot move the slashes, dots and other parts around them.
function inertUrl(text) {
  var box = document.createElement("bdi");
  box.className = "ut ut-url";
  box.dir = "ltr";
  String(text).split(/([\/?#&=.:@])/).forEach(function (part) {
    if (!part) return;
    if (INERT_RTL.test(part)) box.appendChild(inertIsolate(part));
    else inertFill(box, part);
  });
  return box;
}
