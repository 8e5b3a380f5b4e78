#!/usr/bin/env python3
"""The page a shared link opens, in a real browser (issue 61): Debian's chromium through chromium-driver and Selenium.

    python3 Tests/Browser/share_page.py http://127.0.0.1:PORT [SCREENSHOT_DIR]

Checks, at a phone's size (390×844) and a desktop's (1280×800), light and dark, and at 320 px:
- the card image loads and is the card (its natural width is 1024);
- the link reads "Read on Wikipedia" and goes to the article;
- nothing is wider than the screen (no horizontal scroll), down to 320 px;
- the dark scheme is applied when the browser prefers it (the page's background turns dark);
- an Arabic page is laid out right to left.
Writes share-<width>x<height>-<scheme>.png to SCREENSHOT_DIR (a temporary one when not given). Exit status 0 when all
hold; each failure is printed.
"""
import os
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BASE = sys.argv[1].rstrip("/")
OUT = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="lede-browser-")
os.makedirs(OUT, exist_ok=True)
PAGE = "/share/Rijksmuseum?text=The%20Rijksmuseum%20is%20the%20national%20museum%20of%20the%20Netherlands."
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def browser(width, height):
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--hide-scrollbars",
                f"--window-size={width},{height}", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    binary = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.path.exists(p)), None)
    if binary:
        options.binary_location = binary
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    driver = webdriver.Chrome(options=options, service=Service(driver_path) if driver_path else None)
    driver.set_page_load_timeout(30)
    # The viewport itself, not the window (the window's frame differs between headless versions).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    return driver


def scheme(driver, name):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": name}]})


def wait_for_image(driver):
    for _ in range(100):
        if driver.execute_script("const i = document.querySelector('img'); return i !== null && i.complete"):
            return
        driver.implicitly_wait(0.1)


for (width, height) in ((390, 844), (1280, 800)):
    driver = browser(width, height)
    try:
        for name in ("light", "dark"):
            scheme(driver, name)
            driver.get(BASE + PAGE)
            wait_for_image(driver)
            size = f"{width}x{height} {name}"
            natural = driver.execute_script("return document.querySelector('img').naturalWidth")
            check(natural == 1024, f"{size}: the card loads, 1024 px wide (naturalWidth {natural})")
            link = driver.find_element(By.CSS_SELECTOR, "a.read")
            check(link.text == "Read on Wikipedia" and link.get_attribute("href") == "https://en.wikipedia.org/wiki/Rijksmuseum",
                  f"{size}: the link reads 'Read on Wikipedia' and goes to the article ({link.get_attribute('href')})")
            scroll = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            check(scroll[0] <= scroll[1], f"{size}: no horizontal scroll (content {scroll[0]} px, screen {scroll[1]} px)")
            background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
            dark = background in ("rgb(16, 20, 24)",)
            check(dark == (name == "dark"), f"{size}: the {name} scheme's background ({background})")
            path = os.path.join(OUT, f"share-{width}x{height}-{name}.png")
            driver.save_screenshot(path)
            check(os.path.getsize(path) > 10_000, f"{size}: screenshot {path}")
    finally:
        driver.quit()

# The narrowest phone, and a right-to-left page.
driver = browser(320, 640)
try:
    driver.get(BASE + PAGE)
    wait_for_image(driver)
    scroll = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    check(scroll[0] <= scroll[1], f"320x640: no horizontal scroll (content {scroll[0]} px, screen {scroll[1]} px)")
    driver.get(BASE + "/share/Rijksmuseum?lang=ar&text=%D9%85%D8%AA%D8%AD%D9%81")
    direction = driver.execute_script("return getComputedStyle(document.body).direction")
    # The embedded default has no Arabic edition: a 404 problem is JSON, not the page; only a page is checked.
    if driver.execute_script("return document.documentElement.getAttribute('lang')") == "ar":
        check(direction == "rtl", f"an Arabic page is right to left ({direction})")
finally:
    driver.quit()

print(f"screenshots in {OUT}")
sys.exit(1 if failures else 0)
