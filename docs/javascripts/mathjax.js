// MathJax configuration for pymdownx.arithmatex (generic mode), as recommended by mkdocs-material.
// textmacros: \_ and other text-mode macros inside \text{...} (used in docstrings).
window.MathJax = {
  loader: { load: ["[tex]/textmacros"] },
  tex: {
    packages: { "[+]": ["textmacros"] },
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};

// Re-typeset after instant navigation; a no-op until MathJax has loaded (it typesets on load).
document$.subscribe(() => {
  if (!(window.MathJax && MathJax.startup && MathJax.startup.output && MathJax.typesetPromise)) return;
  MathJax.startup.output.clearCache();
  MathJax.typesetClear();
  MathJax.texReset();
  MathJax.typesetPromise();
});
