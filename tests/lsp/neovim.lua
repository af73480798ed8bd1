-- Neovim headless smoke test of `pi-rules lsp` (run by neovim-smoke.sh; Neovim 0.7 or later).
-- The client set-up is the README's: start the server for rule files and settings files, with
-- the workspace folder the directory that holds `.pi` (or `.git`).
local bin = os.getenv('PI_RULES_BIN') or 'pi-rules'
local out = os.getenv('SMOKE_OUT')

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir ~= '/' do
    if vim.fn.isdirectory(dir .. '/.git') == 1 then return dir end
    dir = vim.fn.fnamemodify(dir, ':h')
  end
  return vim.fn.getcwd()
end

vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
  pattern = { '*/.pi/rules/*.md', '*/.pi/agent/rules/*.md', '*/.pi/pi-config-settings.json*' },
  callback = function(args)
    local root = root_of(args.file)
    local id = vim.lsp.start_client({
      name = 'pi-rules',
      cmd = { bin, 'lsp' },
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    })
    vim.lsp.buf_attach_client(args.buf, id)
  end,
})

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('SMOKE_FILE')))
local ok = vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format('%d:%d %s %s', d.lnum, d.col, tostring(d.code), d.message:gsub('\n.*', '')))
end
if not ok then table.insert(lines, 'TIMEOUT') end
vim.fn.writefile(lines, out)
vim.cmd('qall!')
