// File: report/inline_svg.h
// The roofline chart (opscope/roofline.h's RooflineSvg, or a roofline.svg a
// run folder holds) goes into the page as markup, so it is checked first.
#pragma once

#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope {

// The chart must be exactly one <svg>...</svg> element (an XML declaration
// before it is dropped) made of drawing elements and attributes only, by
// allow-lists kept equal to web/svg_check.js (tests/web/html_sink_lint_test.py
// compares them): no script, no <style> and no style attribute (CSS could
// @import from anywhere or hide the page), no foreignObject or HTML element
// (which would end the SVG inside an HTML body), no on* handler, url() and
// links only to '#id' in the same chart, ids prefixed "chart-" (never
// shadowing the page's own), no '&' or '\' in attribute values (entities and
// escapes could spell a refused word), no comment, CDATA or raw '<' in text.
// Returns the element as it will be inserted, or InvalidArgument naming what
// is refused.
StatusOr<std::string> CheckInlineSvg(std::string_view svg);

}  // namespace opscope
