"""Word pools that seeded worlds and task parameters draw from.

Pools are plain tuples so that a world depends only on its seed; they are large enough that
held-out seeds mostly bring values the policy has not seen (names, titles, items).
"""

FIRST_NAMES = (
    "Alice", "Bruno", "Chloe", "Daniel", "Elena", "Farah", "Gustav", "Hana", "Ivan", "Julia",
    "Kofi", "Lena", "Marco", "Nadia", "Oscar", "Priya", "Quinn", "Rosa", "Samir", "Tara",
    "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zoe", "Aaron", "Bianca", "Carlos", "Dana",
    "Emil", "Fiona", "George", "Helga", "Isaac", "Jonas", "Kira", "Liam", "Maya", "Noah",
)  # fmt: skip
LAST_NAMES = (
    "Adams", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen",
    "Khan", "Lopez", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Silva", "Tanaka",
    "Ueda", "Vargas", "Weber", "Xu", "Young", "Zimmer",
)  # fmt: skip
DOMAINS = ("mail.com", "example.org", "post.net", "inbox.io")

NOTE_TITLES = (
    "Groceries", "Packing list", "Book ideas", "Gift ideas", "Recipes", "Workout plan",
    "Meeting notes", "Travel plans", "Passwords hint", "Garden", "Movies to watch", "Budget",
    "Birthday party", "Car service", "Reading list", "Home repairs", "Podcast ideas", "Weekend",
    "Chores", "Project Atlas", "Vacation", "Music", "Study plan", "Shopping",
)  # fmt: skip
NOTE_WORDS = (
    "milk", "eggs", "bread", "tomatoes", "call mom", "buy tickets", "book hotel", "pay rent",
    "water plants", "charger", "passport", "sunscreen", "coffee", "rice", "apples", "batteries",
    "new tires", "paint", "lamp", "yoga", "pasta", "cheese", "soap", "tea",
)  # fmt: skip

MESSAGE_TEXTS = (
    "See you at noon", "Running late, sorry", "Can you call me?", "Thanks a lot!",
    "Dinner tonight?", "I sent the files", "Happy birthday!", "Where are you?",
    "The meeting moved to Friday", "Got the tickets", "Let's talk tomorrow", "On the train now",
    "Did you feed the cat?", "Lunch at 1?", "Bring an umbrella", "Great news!",
)  # fmt: skip
REPLY_TEXTS = (
    "On my way", "Sounds good", "See you soon", "Thank you", "I'll be there", "Call you later",
    "No problem", "Yes please", "Maybe tomorrow", "Almost there", "Love it", "Count me in",
)  # fmt: skip

EVENT_TITLES = (
    "Dentist", "Team meeting", "Yoga class", "Lunch with Sam", "Haircut", "Piano lesson",
    "Doctor", "Book club", "Flight to Rome", "Car wash", "Parents visit", "Concert",
    "Job interview", "Soccer practice", "Date night", "Coffee with Ana", "Vet appointment",
    "Study group",
)  # fmt: skip

CITIES = (
    "Amsterdam", "Athens", "Bangkok", "Beijing", "Berlin", "Buenos Aires", "Cairo", "Chicago",
    "Delhi", "Dubai", "Dublin", "Hong Kong", "Istanbul", "Jakarta", "Johannesburg", "Lagos",
    "Lima", "Lisbon", "London", "Los Angeles", "Madrid", "Mexico City", "Moscow", "Mumbai",
    "Nairobi", "New York", "Oslo", "Paris", "Rome", "San Francisco", "Seoul", "Singapore",
    "Stockholm", "Sydney", "Tokyo", "Toronto", "Vienna", "Warsaw", "Zurich",
)  # fmt: skip

LANGUAGES = (
    "Dansk", "Deutsch", "English", "Español", "Français", "Italiano", "Magyar", "Nederlands",
    "Norsk", "Polski", "Português", "Română", "Suomi", "Svenska", "Türkçe", "Čeština",
)  # fmt: skip
RINGTONES = ("Chime", "Harp", "Marimba", "Pulse", "Ripple", "Zen")
FONT_SIZES = ("Small", "Default", "Large", "Largest")
DEVICE_MODELS = ("Pixel 8", "Pixel 7a", "Galaxy S23", "Nova 11", "Moto G84", "Xperia 5")
ANDROID_VERSIONS = ("12", "13", "14", "15")

# Shop catalogue: (name, category, base price in cents, option kind).
PRODUCTS = (
    ("Blue Mug", "Kitchen", 1299, ""), ("Chef Knife", "Kitchen", 3499, ""),
    ("Frying Pan", "Kitchen", 2899, "size"), ("Tea Kettle", "Kitchen", 2499, "color"),
    ("Cutting Board", "Kitchen", 1599, ""), ("Salad Bowl", "Kitchen", 1899, "color"),
    ("Coffee Grinder", "Kitchen", 4599, ""), ("Water Bottle", "Kitchen", 999, "color"),
    ("Toaster", "Kitchen", 3999, "color"),
    ("T-Shirt", "Clothing", 1499, "size"), ("Hoodie", "Clothing", 3999, "size"),
    ("Rain Jacket", "Clothing", 6999, "size"), ("Wool Socks", "Clothing", 899, "size"),
    ("Baseball Cap", "Clothing", 1799, "color"), ("Jeans", "Clothing", 4999, "size"),
    ("Sneakers", "Clothing", 7999, "size"), ("Scarf", "Clothing", 2199, "color"),
    ("Headphones", "Electronics", 8999, "color"), ("Phone Case", "Electronics", 1999, "color"),
    ("USB Cable", "Electronics", 799, ""), ("Power Bank", "Electronics", 2999, ""),
    ("Smart Watch", "Electronics", 14999, "color"), ("Speaker", "Electronics", 5999, "color"),
    ("Keyboard", "Electronics", 4499, ""), ("Webcam", "Electronics", 3999, ""),
    ("Desk Lamp", "Home", 2799, "color"), ("Throw Pillow", "Home", 1999, "color"),
    ("Candle Set", "Home", 1499, ""), ("Plant Pot", "Home", 1299, "size"),
    ("Wall Clock", "Home", 2499, ""), ("Bath Towel", "Home", 1699, "color"),
    ("Door Mat", "Home", 1899, ""), ("Picture Frame", "Home", 1099, "size"),
)  # fmt: skip
CATEGORIES = ("Kitchen", "Clothing", "Electronics", "Home")
OPTIONS = {"size": ("S", "M", "L", "XL"), "color": ("Black", "White", "Blue", "Red")}
STREETS = ("Oak Street", "Maple Avenue", "Pine Road", "Cedar Lane", "Elm Street", "Lake Drive")
TOWNS = ("Springfield", "Riverton", "Lakeside", "Hillview", "Brookfield", "Fairview")

MAIL_SUBJECTS = (
    "Project update", "Invoice for May", "Team lunch", "Weekend plans", "Your order shipped",
    "Quarterly report", "Welcome aboard", "Conference tickets", "Photo album", "Rent reminder",
    "Newsletter", "Interview schedule", "Flight itinerary", "Book recommendation",
    "Password reset", "Volunteer day", "Garden club", "Budget review", "Holiday schedule",
    "Survey results",
)  # fmt: skip
MAIL_BODIES = (
    "Please see the details below.", "Let me know what you think.", "Thanks for your help!",
    "The numbers look good this month.", "Can we meet next week?", "Tickets are attached.",
    "Reminder: it is due on Friday.", "Photos from the trip are up.",
)  # fmt: skip

FILE_STEMS = (
    "report", "invoice", "budget", "notes", "summary", "slides", "contract", "resume", "draft",
    "letter", "plan", "receipt", "scan", "agenda", "photo", "song", "podcast", "diagram",
    "poster", "ticket",
)  # fmt: skip
FOLDER_EXTS = {
    "Downloads": (".pdf", ".zip", ".apk", ".pdf"),
    "Documents": (".docx", ".pdf", ".txt", ".xlsx"),
    "Pictures": (".jpg", ".png", ".jpg"),
    "Music": (".mp3", ".m4a"),
}
FOLDERS = ("Downloads", "Documents", "Pictures", "Music")
NEW_FOLDER_NAMES = ("Taxes", "Receipts", "Holiday", "Work", "School", "Archive", "Scans", "Old")

MONTHS = ("May", "June", "July")
MONTH_DAYS = (31, 30, 31)
# Weekday (0 = Monday) of the first day of each month above (2025).
MONTH_FIRST_WEEKDAY = (3, 6, 1)
TODAY = (1, 9)  # June 9, as (month index, day)
