-- mbridge-lint language server for Neovim 0.7 or newer. Put this in init.lua (or source it from there).
-- Starts one server for the session and attaches every YAML and Python buffer to it.
local mbridge_lint_client
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "yaml", "python" },
  callback = function(args)
    if not mbridge_lint_client then
      mbridge_lint_client = vim.lsp.start_client({
        name = "mbridge-lint",
        cmd = { "mbridge-lint", "lsp" },
        root_dir = vim.loop.cwd(),
      })
    end
    vim.lsp.buf_attach_client(args.buf, mbridge_lint_client)
  end,
})
