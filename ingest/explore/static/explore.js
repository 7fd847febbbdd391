// The explorer works without this file; it only makes two things quicker, with no other origin and
// no inline script (the page's Content-Security-Policy forbids both):
// a filter or sort chosen from a list applies at once, and j / k move between a table's row links.
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }
  const links = Array.from(document.querySelectorAll("a[data-evidence], a[data-open]"));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key !== "j" && event.key !== "k") return;
    const at = links.indexOf(document.activeElement);
    const next = event.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
    if (links[next]) { links[next].focus(); event.preventDefault(); }
  });
});
