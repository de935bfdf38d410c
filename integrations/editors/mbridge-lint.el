;; mbridge-lint language server for Emacs with Eglot (built in from Emacs 29; the elpa-eglot package before).
;; Put this in your init file. YAML buffers need yaml-mode (or yaml-ts-mode on Emacs 29+).
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((yaml-mode yaml-ts-mode python-mode python-ts-mode) . ("mbridge-lint" "lsp"))))
(add-hook 'yaml-mode-hook #'eglot-ensure)
(add-hook 'python-mode-hook #'eglot-ensure)
