#!/usr/bin/env python3
"""The page's code builds nodes, never markup: a name from a model reaches the
DOM as text (textContent, opscope.h) and nothing a run file holds can become
markup, a handler or a URL. This lint fails, naming file:line, on:

  web/*.js     any HTML sink (innerHTML, outerHTML, insertAdjacentHTML,
               document.write, createContextualFragment, srcdoc), code from
               strings (eval, new Function, setTimeout('...')), an on* handler
               or javascript: written in a string, a URL attribute (href, src,
               action) set to anything but a literal '#...', setAttribute of
               on*, style or a URL attribute;
  web/index.html  a handler attribute, a style attribute, an inline <script>
               or <style>, javascript: (the page's Content-Security-Policy
               would block them);
  web/style.css   @import or url() of anything but data: (nothing is fetched);

and when the roofline chart's allow-lists differ between the C++ gate
(CheckInlineSvg, src/report/inline_svg.cc) and the page's (web/svg_check.js).

  python3 tests/web/html_sink_lint_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

JS_SINKS = [
    (re.compile(r'\b(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|srcdoc)\b'),
     'an HTML sink: build nodes (opscope.h, createElement, textContent) instead'),
    (re.compile(r'\bdocument\s*\.\s*write(ln)?\b'), 'document.write: build nodes instead'),
    (re.compile(r'\beval\s*\(|\bnew\s+Function\b|\b(setTimeout|setInterval)\s*\(\s*[\'"`]'),
     'code from a string (the policy forbids it)'),
    (re.compile(r'\bsetAttribute(NS)?\s*\([^,]*?[\'"`](on[a-z]*|style|href|xlink:href|src|action|formaction)[\'"`]',
                re.I), 'setAttribute of a handler, style or URL attribute'),
    (re.compile(r'\b(href|src|action|formaction)\s*[:=](?!=)(?!\s*[\'"`]#)'),
     "a URL attribute from anything but a literal '#...'"),
]
# A string or template literal on one line.
STRING = re.compile(r'(\'(?:\\.|[^\'\\])*\'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`)')
IN_STRING = [
    (re.compile(r'\bon[a-z]+\s*=', re.I), 'an on* handler written as markup'),
    (re.compile(r'javascript:', re.I), 'a javascript: URL'),
]
HTML_RULES = [
    (re.compile(r'\son[a-z]+\s*=', re.I), 'a handler attribute (the policy blocks inline handlers)'),
    (re.compile(r'\sstyle\s*=', re.I), 'a style attribute (the policy blocks inline styles)'),
    (re.compile(r'<script(?![^>]*\bsrc=)[^>]*>', re.I), 'an inline <script> (link a web/ file instead)'),
    (re.compile(r'<style\b', re.I), 'an inline <style> (use style.css)'),
    (re.compile(r'javascript:', re.I), 'a javascript: URL'),
]
CSS_RULES = [
    (re.compile(r'@import', re.I), '@import (nothing is fetched)'),
    (re.compile(r'url\(\s*(?![\'"]?data:)', re.I), 'url() of anything but data: (nothing is fetched)'),
]


def code_of(line):
    """The line without a trailing // comment (a // inside a string stays)."""
    return re.sub(r'(^|\s)//\s.*$', '', line)


def lint_js(path, rel, problems):
    for n, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
        code = code_of(line)
        for rule, why in JS_SINKS:
            if rule.search(code):
                problems.append(f'{rel}:{n}: {why}: {line.strip()}')
        for literal in STRING.findall(code):
            for rule, why in IN_STRING:
                if rule.search(literal):
                    problems.append(f'{rel}:{n}: {why}: {line.strip()}')


def lint_lines(path, rel, rules, problems):
    for n, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
        for rule, why in rules:
            if rule.search(line):
                problems.append(f'{rel}:{n}: {why}: {line.strip()}')


def listed(text, pattern, rel, what, problems):
    """The quoted strings of the declaration `pattern` matches, up to its end."""
    m = re.search(pattern, text, re.S)
    if not m:
        problems.append(f'{rel}: no {what} found (the lint looks for {pattern!r})')
        return None
    return re.findall(r'[\'"]([^\'"]*)[\'"]', m.group(1))


def compare_svg_lists(src, problems):
    cc_rel, js_rel = 'src/report/inline_svg.cc', 'web/svg_check.js'
    cc, js = (src / cc_rel).read_text(encoding='utf-8'), (src / js_rel).read_text(encoding='utf-8')
    pairs = [('kSvgElements', 'SVG_ELEMENTS'), ('kSvgAttributes', 'SVG_ATTRIBUTES'), ('kSvgFunctions', 'SVG_FUNCTIONS')]
    for cc_name, js_name in pairs:
        a = listed(cc, cc_name + r'\[\]\s*=\s*\{(.*?)\};', cc_rel, cc_name, problems)
        b = listed(js, js_name + r'\s*=\s*new Set\(\[(.*?)\]\)', js_rel, js_name, problems)
        if a is None or b is None:
            continue
        if not a:
            problems.append(f'{cc_rel}: {cc_name} is empty')
        if set(a) != set(b) or len(a) != len(b):
            only_cc, only_js = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            problems.append(f'{cc_rel} {cc_name} and {js_rel} {js_name} differ: only in C++ {only_cc}, '
                            f'only in JS {only_js}' + (' (a duplicate)' if not only_cc and not only_js else ''))
    a = listed(cc, r'kSvgIdPrefix\s*=\s*("[^"]*")', cc_rel, 'kSvgIdPrefix', problems)
    b = listed(js, r"SVG_ID_PREFIX\s*=\s*('[^']*')", js_rel, 'SVG_ID_PREFIX', problems)
    if a is not None and b is not None and a != b:
        problems.append(f'{cc_rel} kSvgIdPrefix {a} and {js_rel} SVG_ID_PREFIX {b} differ')


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    problems = []
    web = src / 'web'
    scripts = sorted(web.glob('*.js'))
    if not scripts:
        problems.append(f'{web}: no .js files (wrong SOURCE_DIR?)')
    for path in scripts:
        lint_js(path, path.relative_to(src), problems)
    for path in sorted(web.glob('*.html')):
        lint_lines(path, path.relative_to(src), HTML_RULES, problems)
    for path in sorted(web.glob('*.css')):
        lint_lines(path, path.relative_to(src), CSS_RULES, problems)
    compare_svg_lists(src, problems)
    for p in problems:
        print(p)
    if problems:
        print(f'html_sink_lint_test: {len(problems)} problem(s)')
        return 1
    print(f'html_sink_lint_test: {len(scripts)} scripts, the page and the SVG allow-lists are clean')
    return 0


if __name__ == '__main__':
    sys.exit(main())
