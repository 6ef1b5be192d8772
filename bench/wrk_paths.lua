-- wrk script: GET the paths listed in the file named by WRK_PATHS, one per line, in turn
-- (each wrk thread loads its own copy and walks the list from its own start).
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  paths[#paths + 1] = line
end
local counter = 0
local headers = {}
local token = os.getenv("WRK_BEARER")
if token and token ~= "" then
  headers["Authorization"] = "Bearer " .. token
end

function setup(thread)
  thread:set("offset", math.random(#paths))
end

request = function()
  counter = counter + 1
  return wrk.format("GET", paths[((counter + (offset or 0)) % #paths) + 1], headers)
end
